import { doubleBraceAt, type FieldSlot } from './substitute.js';
import { slotText, valueText } from './fieldValues.js';
import { describeValue, parsePathRaw, renderJson, resolvePath, tryParseJson, type Json } from './jsonPath.js';

/**
 * Output substitution of response templates (behaviour.md §4.10): one left-to-right scan; for each
 * `{…}` the first source that knows it wins: loop variable → `{@name}` label → `{Response.…}` →
 * session variable → payload field → left as written. Inserted text is never rescanned.
 */

/** The response a template reads (behaviour.md §4.9). */
export interface TemplateResponse {
  kind: 'http' | 'cli';
  status: number;
  /** `Response.body` text (CLI: stdout and stderr interleaved). */
  body: string;
  /** Parsed JSON for paths, `for:` and `save:` (HTTP: the body; CLI: stdout alone), if it parses. */
  json: Json | undefined;
  stdout?: string;
  stderr?: string;
  exitCode?: number;
}

/** The loop state of one iteration. */
export interface LoopFrame {
  name: string;
  value: Json;
  /** 1-based element index. */
  index: number;
}

/** Everything a reference can resolve against. */
export interface RefScope {
  response: TemplateResponse;
  vars: ReadonlyMap<string, string>;
  fields: Map<string, FieldSlot>;
  loop: LoopFrame | null;
  /** Called once per missing response reference with the complete warning text. */
  warn(text: string): void;
}

const REF_RE = /^\{(@?[A-Za-z_][A-Za-z0-9_-]*)((?:\.[^.{}[\]\s]+|\[\d+\])*)\}/;

/** One resolved reference: its text, or null to leave it as written. */
type Resolved = { text: string; value?: Json } | null;

/** The root object `{Response…}` paths start from. */
function responseRoot(r: TemplateResponse): Record<string, Json | undefined> {
  const root: Record<string, Json | undefined> = { status: r.status, body: r.json !== undefined ? r.json : r.body };
  if (r.kind === 'cli') Object.assign(root, { stdout: r.stdout ?? '', stderr: r.stderr ?? '', exit_code: r.exitCode ?? r.status });
  return root;
}

/** Resolve `{Response<rest>}`; warns and returns null when missing (behaviour.md §4.10). */
function resolveResponse(rest: string, scope: RefScope, written: string): Resolved {
  const r = scope.response;
  if (rest === '') return { text: r.body };
  const parsed = parsePathRaw(rest.slice(1));
  if (!parsed || !rest.startsWith('.')) return null;
  const root = responseRoot(r);
  const first = parsed.segs[0];
  const key = 'key' in first ? first.key : '';
  if (!Object.hasOwn(root, key)) {
    const avail = r.kind === 'cli' ? 'Response.status, Response.body, Response.stdout, Response.stderr, Response.exit_code' : 'Response.status, Response.body';
    scope.warn(`warning: unresolved template reference ${written}; available: ${avail}`);
    return null;
  }
  if (key === 'body' && parsed.segs.length === 1) return { text: r.body };
  if (key === 'body' && r.json === undefined) {
    scope.warn(`warning: unresolved template reference ${written}; Response.body is text, not JSON`);
    return null;
  }
  const base = root[key] as Json;
  const res = resolvePath(base, parsed.segs.slice(1));
  if (res.found) return { text: renderJson(res.value), value: res.value };
  const prefix = `Response.${key}${parsed.raws.slice(1, 1 + res.depth).join('')}`;
  scope.warn(`warning: unresolved template reference ${written}; ${prefix} ${describeValue(res.at)}`);
  return null;
}

/** Resolve one reference against the scope, in the behaviour.md §4.10 source order. */
export function resolveRef(name: string, rest: string, scope: RefScope, written: string): Resolved {
  const loop = scope.loop;
  if (loop && name === loop.name) {
    const p = parsePathRaw(rest.startsWith('.') ? rest.slice(1) : rest);
    if (!p) return { text: '' };
    const res = resolvePath(loop.value, p.segs);
    return res.found ? { text: renderJson(res.value), value: res.value } : { text: '' };
  }
  if (name.startsWith('@')) return rest === '' ? { text: loop ? `${name}-${loop.index}` : name } : null;
  if (name === 'Response') return resolveResponse(rest, scope, written);
  const v = scope.vars.get(name);
  if (v !== undefined) {
    if (rest === '') return { text: v };
    const idx = /^\[(\d+)\]$/.exec(rest);
    if (idx) return { text: slotText(v, Number(idx[1])) };
    const p = parsePathRaw(rest.slice(1));
    const json = tryParseJson(v);
    const res = p && json !== undefined ? resolvePath(json, p.segs) : null;
    if (res?.found) return { text: renderJson(res.value), value: res.value };
  }
  const f = scope.fields.get(name);
  if (f) {
    if (rest === '') return { text: valueText(f.value) };
    const idx = /^\[(\d+)\]$/.exec(rest);
    if (idx) return { text: slotText(f.value, Number(idx[1])) };
  }
  return null;
}

/** Substitute every reference of a line (single pass). */
export function substituteOutput(line: string, scope: RefScope): string {
  let out = '';
  let i = 0;
  while (i < line.length) {
    if (line[i] === '{') {
      const dbl = doubleBraceAt(line, i);
      if (dbl > 0) { out += line.slice(i, i + dbl); i += dbl; continue; }
      const m = REF_RE.exec(line.slice(i));
      if (m) {
        const r = resolveRef(m[1], m[2], scope, m[0]);
        if (r) { out += r.text; i += m[0].length; continue; }
      }
    }
    out += line[i];
    i++;
  }
  return out;
}

/**
 * The value of an expression that is exactly one reference (behaviour.md §4.10 assignments):
 * objects and arrays as compact JSON, a missing reference as `""` (with its warning). Returns
 * undefined when the expression is not a single reference.
 */
export function singleReference(expr: string, scope: RefScope): string | undefined {
  const m = REF_RE.exec(expr);
  if (!m || m[0].length !== expr.length || doubleBraceAt(expr, 0) > 0) return undefined;
  const r = resolveRef(m[1], m[2], scope, m[0]);
  return r ? r.text : m[1] === 'Response' ? '' : expr;
}
