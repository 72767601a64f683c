import { TRACE_SECRET_MIN_CHARS } from './limits.js';
import { applySpans, decodedSpans, type Span } from './percentView.js';
import { maskShapes } from './secretShapes.js';

/**
 * The text rules of traces (behaviour.md §14.2, §14.3), shared by the recorder (src/actors) and the
 * replayer (src/replay) so both sides of a comparison are treated alike:
 * - secrets: `/set $NAME = <value>` becomes `/set $NAME = ${env:NAME}`, and known values become
 *   `${env:NAME}` wherever an answer echoes them; webhook tokens and capability secrets are masked;
 * - places: the agent's home becomes `~`, the daemon's port `{port}`;
 * - comparison: ids, timestamps, durations, temp paths and webhook URLs are normalised.
 */

/** A known secret: the variable it belongs to and its value. */
export type Secret = readonly [name: string, value: string];

/** How to turn one daemon's answers into trace text (the recorder's daemon, or the replay's). */
export interface ScrubContext {
  /** The agent's home (absolute); shown as `~`. */
  home?: string;
  /** The daemon's port; `127.0.0.1:<port>` is shown as `127.0.0.1:{port}`. */
  port?: number;
  /** Values shown as `${env:NAME}` (shorter than TRACE_SECRET_MIN_CHARS: left alone). */
  secrets?: Iterable<Secret>;
}

const ASSIGN_RE = /^(\s*\$([A-Za-z_][A-Za-z0-9_]*)\s*=)(.*)$/;
const FENCE_RE = /^\s*(`{3,}|~{3,})\s*(\$?)([A-Za-z_][A-Za-z0-9_]*)\s*$/;
const ENV_REF_RE = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;
const SET_RE = /^(\s*\/set)(\s+|$)/i;

/** A `/set` value as the command reads it: `"…"` with `\"` `\\`, `'…'`, else trimmed (an unclosed quote: the rest). */
function unquote(raw: string): string {
  const v = raw.trim();
  if (v.startsWith('"')) {
    const body = v.length >= 2 && v.endsWith('"') ? v.slice(1, -1) : v.slice(1);
    return body.replace(/\\(["\\])/g, '$1');
  }
  if (v.startsWith("'")) return v.length >= 2 && v.endsWith("'") ? v.slice(1, -1) : v.slice(1);
  return v;
}

const ref = (name: string) => `\${env:${name}}`;

/**
 * behaviour.md §14.2: every persistent assignment of a `/set` (header line, body lines, fenced
 * `$NAME` blocks) is written as `$NAME = ${env:NAME}`, whether or not the value parses, so a value
 * never reaches the trace. Returns the rewritten command and the values it took out.
 */
export function templateSet(cmd: string): { cmd: string; secrets: Secret[] } {
  // SET_RE's '/' is the string's first (only spaces come before it): most commands are ruled out
  // here without the expression (it runs for every recorded command).
  const slash = cmd.indexOf('/');
  if (slash < 0 || (cmd.charCodeAt(slash + 1) | 0x20) !== 0x73) return { cmd, secrets: [] };
  const m = SET_RE.exec(cmd);
  if (!m) return { cmd, secrets: [] };
  const secrets: Secret[] = [];
  // Line 0 is the rest of the header line: /set reads it like a body line, so a fence may open there too.
  const lines = cmd.slice(m[0].length).split('\n');
  const out: string[] = [];
  const assign = (line: string): string => {
    const a = ASSIGN_RE.exec(line);
    if (!a || a[3].trim() === ref(a[2])) return line;
    secrets.push([a[2], unquote(a[3])]);
    return `${a[1]} ${ref(a[2])}`;
  };
  for (let i = 0; i < lines.length; i++) {
    const f = FENCE_RE.exec(lines[i]);
    if (!f) {
      out.push(assign(lines[i]));
      continue;
    }
    const close = new RegExp(`^\\s*${f[1][0] === '`' ? '`' : '~'}{${f[1].length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end])) end++;
    secrets.push([f[3], lines.slice(i + 1, end).join('\n')]);
    // An unclosed fence makes /set fail, but what follows it was still typed as a value: it is taken
    // out all the same, and the fence stays open so the replayed command fails as the recorded one did.
    out.push(...(end < lines.length ? [`$${f[3]} = ${ref(f[3])}`] : [lines[i], ref(f[3])]));
    i = end;
  }
  return { cmd: cmd.slice(0, m[0].length) + out.join('\n'), secrets };
}

/** The names a text refers to as `${env:NAME}`. */
export function envRefs(text: string): string[] {
  return [...text.matchAll(ENV_REF_RE)].map((x) => x[1]);
}

/** A value as one `/set` line value (`"…"` with escapes), or a fenced block when it spans lines. */
function setValueLines(name: string, value: string): { inline?: string; block?: string[] } {
  if (!value.includes('\n')) return { inline: `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` };
  const longest = Math.max(2, ...[...value.matchAll(/`+/g)].map((x) => x[0].length));
  const fence = '`'.repeat(longest + 1);
  return { block: [`${fence}$${name}`, ...value.split('\n'), fence] };
}

/**
 * The replay side of `${env:NAME}` (behaviour.md §14.2): values from `lookup` (the replay's own
 * environment or `--set`). In a `/set` assignment the value is written so the command reads it back
 * exactly; anywhere else it is put in as it is. The first missing name stops it: nothing is sent.
 */
export function expandEnvRefs(cmd: string, lookup: (name: string) => string | undefined): { ok: true; cmd: string } | { ok: false; missing: string } {
  const missing = envRefs(cmd).find((n) => lookup(n) === undefined);
  if (missing !== undefined) return { ok: false, missing };
  const plain = (text: string) => text.replace(ENV_REF_RE, (_all, n: string) => lookup(n) as string);
  const m = SET_RE.exec(cmd);
  if (!m) return { ok: true, cmd: plain(cmd) };
  const lines = cmd.split('\n');
  const head: string[] = [];
  const body: string[] = [];
  lines.forEach((line, i) => {
    const text = i === 0 ? line.slice(m[0].length) : line;
    const a = ASSIGN_RE.exec(text);
    const whole = a && a[3].trim().match(/^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/);
    if (!a || !whole) {
      (i === 0 ? head : body).push(i === 0 ? line.replace(ENV_REF_RE, (_x, n: string) => lookup(n) as string) : plain(line));
      return;
    }
    const v = setValueLines(a[2], lookup(whole[1]) as string);
    if (v.inline !== undefined) (i === 0 ? head : body).push(i === 0 ? `${m[1]} ${a[1].trimStart()} ${v.inline}` : `${a[1]} ${v.inline}`);
    else if (i === 0) {
      head.push(m[1]);
      body.unshift(...(v.block as string[]));
    } else body.push(...(v.block as string[]));
  });
  return { ok: true, cmd: [...head, ...body].join('\n') };
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Turn a daemon's text into trace text (behaviour.md §14.2): known secret values → `${env:NAME}`
 * (longest first), secrets of a known shape masked (secretShapes.ts), the home → `~`, the daemon's port
 * → `{port}`. Applied by the recorder to what it stores and by the replayer to what it receives.
 */
export function scrub(text: string, ctx: ScrubContext): string {
  let out = text;
  const secrets = [...(ctx.secrets ?? [])].filter(([, v]) => [...v].length >= TRACE_SECRET_MIN_CHARS).sort((a, b) => b[1].length - a[1].length);
  for (const [name, value] of secrets) if (out.includes(value)) out = out.split(value).join(ref(name));
  // A value percent-encoded (in a URL the agent opened) is kept out as well, as its name.
  if (secrets.length > 0) out = applySpans(out, decodedSpans(out, (d) => secretSpans(d, secrets), 3));
  out = maskShapes(out);
  if (ctx.home && ctx.home.length > 1 && out.includes(ctx.home)) {
    out = out.replace(new RegExp(`${escapeRe(ctx.home.replace(/\/+$/, ''))}(?![A-Za-z0-9._-])`, 'g'), '~');
  }
  if (ctx.port !== undefined && out.includes(`:${ctx.port}`)) {
    out = out.replace(new RegExp(`\\b(127\\.0\\.0\\.1|localhost):${ctx.port}(?!\\d)`, 'g'), '$1:{port}');
  }
  return out;
}

/** Where the values of `secrets` occur in `text`, each shown as its `${env:NAME}`. */
function secretSpans(text: string, secrets: readonly Secret[]): Span[] {
  const spans: Span[] = [];
  for (const [name, value] of secrets) {
    for (let i = text.indexOf(value); i >= 0; i = text.indexOf(value, i + 1)) spans.push([i, i + value.length, ref(name)]);
  }
  return spans;
}

/**
 * {@link scrub} with a memory of its last call: a recording scrubs the content of every answer, and
 * an agent asking the same thing again gets the same content under the same context (home, port,
 * and the one secrets list of a flush), which then is not scanned again.
 */
export class ScrubMemo {
  private text: string | undefined;
  private ctx: ScrubContext = {};
  private out = '';

  scrub(text: string, ctx: ScrubContext): string {
    if (text === this.text && ctx.home === this.ctx.home && ctx.port === this.ctx.port && ctx.secrets === this.ctx.secrets) return this.out;
    this.out = scrub(text, ctx);
    this.text = text;
    this.ctx = { home: ctx.home, port: ctx.port, secrets: ctx.secrets };
    return this.out;
  }
}

/** The replay side of `{port}`: `127.0.0.1:{port}` in a command or file goes to the daemon it talks to. */
export function expandPort(text: string, port: number): string {
  return text.includes('{port}') ? text.replace(/\b(127\.0\.0\.1|localhost):\{port\}/g, `$1:${port}`) : text;
}

/**
 * behaviour.md §14.3 normalisation, applied to both sides before comparing: webhook URLs, ids
 * (`evt_…`, `cap_…`, `ins_…`, `trc_…`, ULIDs), ISO timestamps, durations (`<n> ms`, `<n> s`) and
 * paths under the temp folders given (→ `<tmp>`).
 */
export function normalise(text: string, tmpRoots: readonly string[] = ['/tmp']): string {
  let out = text.replace(/https?:\/\/(?:127\.0\.0\.1|localhost):(?:\{port\}|\d+)\/webhook\/[^\s"')\]]+/g, '<webhook-url>');
  out = out.replace(/\b(evt|cap|ins|trc)_[A-Za-z0-9_-]+/g, '$1_<id>');
  out = out.replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, '<ulid>');
  out = out.replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, '<time>');
  out = out.replace(/\b\d+(?:\.\d+)? ?(ms|s)\b/g, '<n> $1');
  for (const root of [...new Set(tmpRoots)].filter((r) => r.length > 1).sort((a, b) => b.length - a.length)) {
    out = out.replace(new RegExp(`${escapeRe(root.replace(/\/+$/, ''))}/[^\\s"'\`<>)\\]]*`, 'g'), '<tmp>');
  }
  return out;
}

const ID_RE = /\b(?:evt|cap|ins|trc)_[A-Za-z0-9_-]+/g;

/**
 * Ids a replay meets again under new names (behaviour.md §14.3 normalises them when comparing; a
 * later command that names one, `/events.read evt_…`, needs today's): the ids of an expected and an
 * actual answer paired in order, when both name the same number of ids.
 */
export function learnIds(expected: string | undefined, actual: string | undefined, into: Map<string, string>): void {
  if (expected === undefined || actual === undefined || !expected.includes('_') || !actual.includes('_')) return;
  const a = expected.match(ID_RE) ?? [];
  const b = actual.match(ID_RE) ?? [];
  if (a.length !== b.length) return;
  a.forEach((id, i) => { if (id !== b[i]) into.set(id, b[i]); });
}

/** A command with the recorded ids it names replaced by today's (see learnIds). */
export function mapIds(text: string, ids: ReadonlyMap<string, string>): string {
  return ids.size === 0 || !text.includes('_') ? text : text.replace(ID_RE, (id) => ids.get(id) ?? id);
}
