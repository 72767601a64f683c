import { VALUE_SHORTCUTS_MAX } from '../domain/limits.js';
import type { ShortcutValue } from '../domain/session.js';
import { splitTopLevel, unquoteItem } from './fieldValues.js';
import { jsonType, parsePath, resolvePath, type Json } from './jsonPath.js';
import { substitutePathTemplate, type FieldSlot } from './substitute.js';
import { singleReference, substituteOutput, type LoopFrame, type RefScope, type TemplateResponse } from './templateRefs.js';

/**
 * Response templates (spec §4.11; behaviour.md §4.10–4.12): line kinds in their order —
 * assignment, shortcut assignment, save:, decode:, for:/end:, to:, next:, output.
 */

export type { TemplateResponse } from './templateRefs.js';

/** What a template run may touch. */
export interface TemplateEnv {
  /** Session variables (assignments write here at once). */
  vars: Map<string, string>;
  /** The payload fields of the call. */
  fields: Map<string, FieldSlot>;
  /** The topic's value shortcuts (registrations write here). */
  shortcuts: Map<string, ShortcutValue>;
  /** Write `bytes` to a substituted `to:` path; returns a warning line or null. */
  writeTo(path: string, bytes: Buffer): string | null;
  /** File line of the first template line (for `line <n>` in warnings). */
  firstLine: number;
}

/** A rendered template: output lines, warnings and `next:` lines, assembled by `assembleOutput`. */
export interface TemplateOutput {
  output: string[];
  warnings: string[];
  next: string[];
}

const ASSIGN_RE = /^\{([A-Za-z_][A-Za-z0-9_]*)\}\s*=\s*(.*)$/;
const SHORTCUT_RE = /^\{@([A-Za-z0-9_][A-Za-z0-9_.-]*(?:\{[^{}]+\}[A-Za-z0-9_.-]*)*)\}\s*=\s*(.*)$/;
/** What a shortcut name may be once its references are substituted. */
const SHORTCUT_NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
/** `empty: <text>` in a loop body: printed once when the array is empty (beyond spec). */
const EMPTY_RE = /^empty:\s?(.*)$/;
const DOLLAR_ASSIGN_RE = /^\$([A-Za-z_][A-Za-z0-9_]*)\s*=/;
const FOR_RE = /^for:\s*([A-Za-z_][A-Za-z0-9_]*)\s+in\s+(\S+)$/;
const AUTHOR_LINK_RE = /\[@([A-Za-z0-9_][A-Za-z0-9_.-]*) ([^\]]+)\]\(([^)\s]+)\)/g;

type Buffered = { state: 'none' } | { state: 'failed' } | { state: 'text'; text: string } | { state: 'bytes'; bytes: Buffer };

/** Remove one pair of quotes wrapping the whole expression. */
function unwrap(expr: string): string {
  if (expr.length >= 2 && ((expr[0] === '"' && expr.endsWith('"')) || (expr[0] === "'" && expr.endsWith("'")))) return expr.slice(1, -1);
  return expr;
}

/** behaviour.md §4.12 base64: standard or URL-safe, whitespace ignored, padding optional. */
export function decodeBase64(text: string): Buffer | null {
  const t = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(t)) return null;
  const bare = t.replace(/=+$/, '');
  if (bare.length % 4 === 1) return null;
  return Buffer.from(bare.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** Strip the optional `$.` (and for `for:` the optional `Response.body` prefix) from a path. */
function normalisePath(path: string, allowResponseBody: boolean): string {
  let p = path;
  if (allowResponseBody && (p === 'Response.body' || p.startsWith('Response.body.'))) p = p.slice('Response.body'.length).replace(/^\./, '');
  if (p === '$') return '';
  if (p.startsWith('$.')) p = p.slice(2);
  return p;
}

class Run {
  readonly out: TemplateOutput = { output: [], warnings: [], next: [] };
  private buffer: Buffered = { state: 'none' };
  private readonly registered = new Set<string>();
  private readonly seenRefWarnings = new Set<string>();

  constructor(private readonly response: TemplateResponse, private readonly env: TemplateEnv) {}

  warn(text: string): void {
    if (text.startsWith('warning: unresolved template reference')) {
      if (this.seenRefWarnings.has(text)) return;
      this.seenRefWarnings.add(text);
    }
    this.out.warnings.push(text);
  }

  scope(loop: LoopFrame | null): RefScope {
    return { response: this.response, vars: this.env.vars, fields: this.env.fields, loop, warn: (t) => this.warn(t) };
  }

  /** Evaluate an expression: quotes removed, then output substitution; a lone reference keeps its JSON. */
  expression(raw: string, loop: LoopFrame | null): string {
    const expr = unwrap(raw.trim());
    const scope = this.scope(loop);
    return singleReference(expr, scope) ?? substituteOutput(expr, scope);
  }

  /**
   * `{@name} = …` (behaviour.md §4.11): tuple when wrapped in parentheses; `@name-<i>` in a loop.
   * Beyond spec, a name holding references (`{@note-{n.id}} = {n.id}`) is substituted and registered
   * as it reads, in or out of a loop; the first such line of a run clears `@note` and `@note-*`.
   */
  shortcut(name: string, raw: string, loop: LoopFrame | null): void {
    const t = raw.trim();
    let value: ShortcutValue;
    if (t.startsWith('(') && t.endsWith(')')) {
      const items = splitTopLevel(t.slice(1, -1)).map((it) => this.expression(unquoteItem(it), loop));
      value = items.length === 1 ? items[0] : items;
    } else value = this.expression(t, loop);
    const map = this.env.shortcuts;
    const keyed = name.includes('{');
    // A keyed name (`{@note-{n.id}}`) is named by the item itself, so `@note-7` is note 7 wherever
    // the list put it; its family is the part before the first reference (`note`).
    const family = keyed ? name.slice(0, name.indexOf('{')).replace(/[-.]+$/, '') : name;
    if (!this.registered.has(family)) {
      this.registered.add(family);
      for (const k of [...map.keys()]) {
        if (k === family || (k.startsWith(`${family}-`) && (keyed || /^\d+$/.test(k.slice(family.length + 1))))) map.delete(k);
      }
    }
    let key = loop ? `${name}-${loop.index}` : name;
    if (keyed) {
      key = substituteOutput(name, this.scope(loop));
      if (!SHORTCUT_NAME_RE.test(key) || key.length > 128) {
        this.warn(`warning: shortcut name @${key} is not valid (letters, digits, ".", "_" and "-"); not registered`);
        return;
      }
    }
    map.delete(key);
    map.set(key, value);
    while (map.size > VALUE_SHORTCUTS_MAX) map.delete(map.keys().next().value as string);
  }

  save(path: string): void {
    const segs = parsePath(normalisePath(path, false));
    const res = segs && this.response.json !== undefined ? resolvePath(this.response.json, segs) : null;
    if (!res || !res.found || res.value === null) {
      this.warn(`warning: save: no value at ${path}`);
      this.buffer = { state: 'failed' };
      return;
    }
    const v = res.value;
    this.buffer = { state: 'text', text: typeof v === 'string' ? v : JSON.stringify(v) };
  }

  decode(enc: string): void {
    if (enc !== 'base64' && enc !== 'none') { this.warn(`warning: decode: unknown encoding "${enc}" (use base64 or none)`); return; }
    const b = this.buffer;
    if (b.state === 'failed') return;
    if (b.state !== 'text') {
      if (b.state === 'none') this.warn('warning: decode: nothing to decode (no save: before it)');
      return;
    }
    if (enc === 'none') { this.buffer = { state: 'bytes', bytes: Buffer.from(b.text, 'utf8') }; return; }
    const bytes = decodeBase64(b.text);
    if (!bytes) { this.warn('warning: decode: base64 failed: input is not valid base64'); this.buffer = { state: 'failed' }; return; }
    this.buffer = { state: 'bytes', bytes };
  }

  to(rawPath: string): void {
    const b = this.buffer;
    this.buffer = { state: 'none' };
    if (b.state === 'failed') return;
    if (b.state === 'none') { this.warn('warning: to: nothing to write (no save: before it)'); return; }
    const path = substitutePathTemplate(rawPath.trim(), this.env.fields, this.env.vars);
    const w = this.env.writeTo(path, b.state === 'bytes' ? b.bytes : Buffer.from(b.text, 'utf8'));
    if (w) this.warn(w);
  }

  /** One non-loop line (behaviour.md §4.10 order). */
  line(line: string, loop: LoopFrame | null): void {
    let m = ASSIGN_RE.exec(line);
    if (m) { this.env.vars.set(m[1], this.expression(m[2], loop)); return; }
    m = SHORTCUT_RE.exec(line);
    if (m) { this.shortcut(m[1], m[2], loop); return; }
    m = DOLLAR_ASSIGN_RE.exec(line);
    if (m) { this.warn(`warning: cannot assign $${m[1]} in a response template`); return; }
    if (line.startsWith('save:')) { this.save(line.slice(5).trim()); return; }
    if (line.startsWith('decode:')) { this.decode(line.slice(7).trim()); return; }
    if (line.startsWith('to:')) { this.to(line.slice(3)); return; }
    const text = substituteOutput(line, this.scope(loop));
    if (line.startsWith('next:')) { if (!this.out.next.includes(text)) this.out.next.push(text); return; }
    this.out.output.push(text);
  }

  /** Run a `for:` loop over the body lines (behaviour.md §4.11). */
  loop(varName: string, path: string, body: string[]): void {
    const segs = parsePath(normalisePath(path, true));
    const json = this.response.json;
    let arr: Json | undefined;
    if (segs && segs.length === 0) arr = json !== undefined ? json : this.response.body;
    else if (segs && json !== undefined) { const r = resolvePath(json, segs); arr = r.found ? r.value : undefined; }
    if (arr === undefined) { this.warn(`warning: for: ${path} not found; loop skipped`); return; }
    if (!Array.isArray(arr)) { this.warn(`warning: for: ${path} is not an array (${jsonType(arr)}); loop skipped`); return; }
    const items = body.filter((l) => !EMPTY_RE.test(l));
    if (arr.length === 0) {
      for (const l of body) {
        const e = EMPTY_RE.exec(l);
        if (e) this.out.output.push(substituteOutput(e[1], this.scope(null)));
      }
    }
    arr.forEach((value, k) => {
      for (const l of items) this.line(l, { name: varName, value, index: k + 1 });
    });
  }

  run(lines: string[]): void {
    for (let k = 0; k < lines.length; k++) {
      const line = lines[k].trimEnd();
      if (line.startsWith('for:')) {
        const m = FOR_RE.exec(line);
        const body: string[] = [];
        let j = k + 1;
        let closed = false;
        for (; j < lines.length; j++) {
          const l = lines[j].trimEnd();
          if (/^end:\s*$/.test(l)) { closed = true; break; }
          if (l.startsWith('for:')) { this.warn(`warning: nested for: is not supported (line ${this.env.firstLine + j})`); continue; }
          body.push(l);
        }
        if (!closed) this.warn('warning: for: without end:');
        if (m) this.loop(m[1], m[2], body);
        else this.warn(`warning: line ${this.env.firstLine + k}: cannot read "${line}" (use for: <var> in <path>); loop skipped`);
        k = j;
        continue;
      }
      if (/^end:\s*$/.test(line)) { this.warn(`warning: line ${this.env.firstLine + k}: end: without for:; ignored`); continue; }
      this.line(line, null);
    }
  }
}

/**
 * Render a response template. Author shortcut links `[@id Label](href)` in output lines become
 * `[Label][@id]` and register value shortcut `@id` → href (behaviour.md §4.10).
 */
export function renderTemplate(lines: string[], response: TemplateResponse, env: TemplateEnv): TemplateOutput {
  const run = new Run(response, env);
  run.run(lines);
  run.out.output = run.out.output.map((l) => l.replace(AUTHOR_LINK_RE, (_all, id: string, label: string, href: string) => {
    env.shortcuts.delete(id);
    env.shortcuts.set(id, href);
    return `[${label}][@${id}]`;
  }));
  return run.out;
}

/**
 * behaviour.md §4.10 output assembly: output lines, then warnings, then `next:` lines; runs of
 * blank lines collapse to one; leading and trailing blank lines are dropped.
 */
export function assembleOutput(output: string[], warnings: string[], next: string[]): string {
  const all = [...output, ...warnings, ...next].join('\n').replace(/\r/g, '').split('\n');
  const lines: string[] = [];
  for (const l of all) {
    if (l.trim() === '' && (lines.length === 0 || lines[lines.length - 1].trim() === '')) continue;
    lines.push(l);
  }
  while (lines.length > 0 && lines[lines.length - 1].trim() === '') lines.pop();
  return lines.join('\n');
}
