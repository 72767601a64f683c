import type { ActionDef, DocWarning, HeaderDef, HttpMethod } from './types.js';
import { isParamLine, parseParam } from './params.js';
import { readWord, wsLength } from './quote.js';

const FIRST_RE = /^(GET|POST|PUT|PATCH|DELETE|CLI)(?:\s+([\s\S]*))?$/i;
const BODY_RE = /^([ \t]+)body:(?:[ \t]+(.*))?$/;
const MODIFIERS = ['base64', 'base64file', 'file'];

/** An action block as the parser hands it over: id, fence line and the block's text lines. */
export interface ActionBlock {
  id: string;
  /** 1-based line of the opening fence; content line i is `fence + 1 + i`. */
  fence: number;
  lines: string[];
}

/** Parse result: the action (null when ignored) and its warnings. */
export interface ParsedAction {
  action: ActionDef | null;
  warnings: DocWarning[];
}

/** A body template and where it stands: the `body:` line and its first text line. */
interface BodySource {
  text: string;
  line: number;
  textLine: number;
  perLine: boolean;
}

interface FirstLine {
  url: string;
  headers: HeaderDef[];
  inlineBody?: string;
  leftover: string[];
}

/** behaviour.md §4.2 http-line after the METHOD: target, `-H "…"` flags and one `-d '…'`. */
function parseHttpRest(rest: string): FirstLine | null {
  const target = /^\S+/.exec(rest);
  if (!target) return null;
  const out: FirstLine = { url: target[0], headers: [], leftover: [] };
  let t = rest.slice(target[0].length);
  for (;;) {
    t = t.slice(wsLength(t));
    if (t === '') break;
    const flag = /^(-H|-d)(?=\s)/.exec(t);
    if (flag) {
      const after = t.slice(2);
      const w = readWord(after.slice(wsLength(after)));
      if (w) {
        const used = 2 + wsLength(after) + w.length;
        if (flag[1] === '-H' && w.value.includes(':')) {
          const i = w.value.indexOf(':');
          out.headers.push({ name: w.value.slice(0, i).trim(), value: w.value.slice(i + 1).trim() });
          t = t.slice(used);
          continue;
        }
        if (flag[1] === '-d' && out.inlineBody === undefined) {
          out.inlineBody = w.value;
          t = t.slice(used);
          continue;
        }
      }
    }
    const tok = readWord(t) ?? { value: t, length: t.length };
    out.leftover.push(t.slice(0, tok.length));
    t = t.slice(tok.length);
  }
  return out;
}

/** Remove the common leading indentation of the non-blank lines; drop trailing blank lines. */
function dedent(lines: string[]): string {
  const body = [...lines];
  while (body.length > 0 && body[body.length - 1].trim() === '') body.pop();
  const indents = body.filter((l) => l.trim() !== '').map((l) => wsLength(l));
  const cut = indents.length ? Math.min(...indents) : 0;
  return body.map((l) => (l.trim() === '' ? '' : l.slice(cut))).join('\n');
}

/** Warn about `{expr|mod}` placeholders whose modifiers are unknown (behaviour.md §4.5). */
function checkModifiers(id: string, body: string, firstLine: number, perLine: boolean, warnings: DocWarning[]): void {
  const re = /(?<!\{)\{([A-Za-z_][A-Za-z0-9_-]*(?:\[\d+\])?)((?:\|[^|{}\s]*)+)\}(?!\})/g;
  body.split('\n').forEach((text, i) => {
    for (const m of text.matchAll(re)) {
      const bad = m[2].slice(1).split('|').find((x) => !MODIFIERS.includes(x));
      if (bad !== undefined) {
        warnings.push({ line: firstLine + (perLine ? i : 0), text: `act.${id}: unknown body modifier "${bad}"; {${m[1]}${m[2]}} is left as is` });
      }
    }
  });
}

/**
 * Parse one `act.<id>` block (behaviour.md §4.1–4.5). Never drops a line silently: every line is
 * the first line, a continuation line (CLI), a parameter, part of the body, blank, or a warning.
 */
export function parseActionBlock(block: ActionBlock): ParsedAction {
  const { id, fence, lines } = block;
  const warnings: DocWarning[] = [];
  const lineOf = (i: number) => fence + 1 + i;
  const warn = (i: number, text: string) => warnings.push({ line: lineOf(i), text: `act.${id}: ${text}` });
  let i = lines.findIndex((l) => l.trim() !== '');
  const m = i < 0 ? null : FIRST_RE.exec(lines[i].trim());
  const http = m && m[1].toUpperCase() !== 'CLI' ? parseHttpRest(m[2] ?? '') : null;
  if (!m || (m[1].toUpperCase() === 'CLI' ? !(m[2] ?? '').trim() : !http)) {
    warnings.push({ line: i < 0 ? fence : lineOf(i), text: `act.${id}: cannot parse the first line (expected GET, POST, PUT, PATCH, DELETE or CLI and a target); action ignored` });
    return { action: null, warnings };
  }
  const action: ActionDef = { id, kind: http ? 'http' : 'cli', headers: [], fields: [], line: fence };
  const firstIdx = i;
  if (http) {
    action.method = m[1].toUpperCase() as HttpMethod;
    action.url = http.url;
    action.headers = http.headers;
    if (http.leftover.length) warn(i, `unrecognised text after the URL ignored: ${http.leftover.join(' ')}`);
    i++;
  } else {
    // behaviour.md §4.3: the command runs up to the first parameter or `body:` line.
    const cmd = [(m[2] ?? '').replace(/^\s+/, '')];
    for (i++; i < lines.length && !isParamLine(lines[i]) && !BODY_RE.test(lines[i]); i++) cmd.push(lines[i]);
    while (cmd.length > 1 && cmd[cmd.length - 1].trim() === '') cmd.pop();
    action.command = cmd.join('\n');
  }
  let body: BodySource | undefined;
  for (; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') continue;
    if (isParamLine(line)) {
      const { field, problems } = parseParam(line, lineOf(i));
      for (const p of problems) warn(i, p);
      if (action.fields.some((f) => f.name === field.name)) {
        warn(i, `duplicate field ${field.name}; later declaration ignored`);
        continue;
      }
      if (field.alias !== undefined && action.fields.some((f) => f.alias === field.alias)) {
        warn(i, `alias -${field.alias} is already used; ignored`);
        delete field.alias;
      }
      action.fields.push(field);
      continue;
    }
    const b = BODY_RE.exec(line);
    if (b && body) {
      warn(i, 'second body: template ignored');
      while (i + 1 < lines.length && (lines[i + 1].trim() === '' || wsLength(lines[i + 1]) > b[1].length)) i++;
      continue;
    }
    if (b) {
      const inline = (b[2] ?? '').trim();
      if (inline !== '') {
        // `body: <text>` is a one-line template; deeper lines after it are not part of it.
        body = { text: inline, line: lineOf(i), textLine: lineOf(i), perLine: false };
        continue;
      }
      const start = i;
      const tpl: string[] = [];
      while (i + 1 < lines.length && (lines[i + 1].trim() === '' || wsLength(lines[i + 1]) > b[1].length)) tpl.push(lines[++i]);
      body = { text: dedent(tpl), line: lineOf(start), textLine: lineOf(start + 1), perLine: true };
      continue;
    }
    warn(i, `unrecognised line ignored: ${[...line.trim()].slice(0, 60).join('')}`);
  }
  attachBody(action, { http, body, firstLine: lineOf(firstIdx), warnings });
  return { action, warnings };
}

/** Choose and check the body template (behaviour.md §4.5, §12 Q1). */
function attachBody(action: ActionDef, o: { http: FirstLine | null; body?: BodySource; firstLine: number; warnings: DocWarning[] }): void {
  const { id } = action;
  const inline = o.http?.inlineBody;
  let chosen = o.body;
  if (inline !== undefined && o.body) {
    o.warnings.push({ line: o.body.line, text: `act.${id}: both -d and body: given; body: is used` });
  } else if (inline !== undefined) {
    chosen = { text: inline, line: o.firstLine, textLine: o.firstLine, perLine: false };
  }
  if (!chosen) return;
  const kind = action.kind === 'cli' ? 'CLI' : action.method;
  if (kind === 'GET' || kind === 'CLI') {
    o.warnings.push({ line: chosen.line, text: `act.${id}: body template ignored for ${kind}` });
    return;
  }
  if (kind === 'DELETE') {
    o.warnings.push({ line: chosen.line, text: `act.${id}: DELETE sends no body; body ignored` });
    return;
  }
  action.body = chosen.text;
  checkModifiers(id, chosen.text, chosen.textLine, chosen.perLine, o.warnings);
}
