import { fromMarkdown } from 'mdast-util-from-markdown';
import { ACTION_ID_RE } from '../domain/ids.js';
import type { ActionDef, ActionDoc, Directive, DocWarning, PageShortcut } from './types.js';
import { parseFrontmatter } from './frontmatter.js';
import { parseActionBlock, type ActionBlock } from './action.js';
import { blockAnchors, headingInfos, isBlockMarker, type RawHeading } from './anchors.js';
import { isDirectiveLine, parseDirective, plainText, shortcutText } from './links.js';
import { collapse, rewriteLine, type LinkRewrite } from './render.js';

interface Pos {
  start: { line: number; column: number };
  end: { line: number; column: number };
}
interface Node {
  type: string;
  value?: string;
  lang?: string | null;
  depth?: number;
  url?: string;
  label?: string;
  children?: Node[];
  position?: Pos;
}

/** What one walk over the Markdown tree collects. */
interface Collected {
  code: Array<{ node: Node; start: number; end: number }>;
  headings: RawHeading[];
  links: Array<{ node: Node; text: string }>;
  definitions: Node[];
}

function collect(root: Node): Collected {
  const c: Collected = { code: [], headings: [], links: [], definitions: [] };
  const walk = (n: Node) => {
    const p = n.position;
    if (n.type === 'code' && p) c.code.push({ node: n, start: p.start.line, end: p.end.line });
    else if (n.type === 'heading' && p) c.headings.push({ depth: n.depth ?? 1, text: plainText(n), line: p.start.line });
    else if (n.type === 'link') c.links.push({ node: n, text: plainText(n) });
    else if (n.type === 'definition') c.definitions.push(n);
    for (const ch of n.children ?? []) walk(ch);
  };
  walk(root);
  return c;
}

/** An `act.*` fence classified by its info string's first word (behaviour.md §4.1). */
type Fence = { kind: 'action' | 'response'; id: string; start: number; end: number; lines: string[] };

function classify(code: Collected['code'], warnings: DocWarning[]): Fence[] {
  const out: Fence[] = [];
  for (const { node, start, end } of code) {
    const lang = node.lang ?? '';
    if (!lang.startsWith('act.')) continue;
    const resp = /^act\.(.*)\.response$/.exec(lang);
    const id = resp ? resp[1] : lang.slice(4);
    if (!ACTION_ID_RE.test(id)) {
      warnings.push({ line: start, text: `invalid action id "${id}" (use [a-z][a-z0-9_-]*, at most 64 characters); block ignored` });
      // The fence is still an act.* block: it is hidden from the rendering like the others.
      out.push({ kind: 'response', id: '', start, end, lines: [] });
      continue;
    }
    out.push({ kind: resp ? 'response' : 'action', id, start, end, lines: (node.value ?? '').split('\n') });
  }
  return out;
}

/** Parse the act.* fences into actions with their response templates (behaviour.md §4.1, §3.10). */
function actions(fences: Fence[], warnings: DocWarning[]): ActionDef[] {
  const list: ActionDef[] = [];
  const claimed = new Set<string>();
  for (const f of fences.filter((x) => x.kind === 'action')) {
    if (claimed.has(f.id)) {
      warnings.push({ line: f.start, text: `duplicate action id "${f.id}"; this block is ignored` });
      continue;
    }
    claimed.add(f.id);
    const block: ActionBlock = { id: f.id, fence: f.start, lines: f.lines };
    const r = parseActionBlock(block);
    warnings.push(...r.warnings);
    if (r.action) list.push(r.action);
  }
  for (const f of fences.filter((x) => x.kind === 'response' && x.id !== '')) {
    const a = list.find((x) => x.id === f.id);
    if (!a) {
      // A block that failed to parse already has its own warning; "has no block" would mislead.
      if (!claimed.has(f.id)) warnings.push({ line: f.start, text: `act.${f.id}.response has no act.${f.id} block; ignored` });
    } else if (a.response) {
      warnings.push({ line: f.start, text: `act.${f.id}: second response template ignored` });
    } else {
      a.response = { lines: f.lines, line: f.start + 1 };
    }
  }
  return list;
}

/** Page shortcuts and the link rewrites of the rendering (behaviour.md §3.4, §3.7). */
function shortcuts(c: Collected, warnings: DocWarning[]): { list: PageShortcut[]; rewrites: LinkRewrite[] } {
  const found: PageShortcut[] = [];
  const rewrites: LinkRewrite[] = [];
  for (const { node, text } of c.links) {
    const sc = shortcutText(text);
    const p = node.position;
    if (!sc || !p) continue;
    found.push({ id: sc.id, label: sc.label, href: node.url ?? '', line: p.start.line });
    if (p.start.line === p.end.line) rewrites.push({ line: p.start.line, startCol: p.start.column, endCol: p.end.column, id: sc.id, label: sc.label });
  }
  for (const d of c.definitions) {
    const m = /^@([A-Za-z0-9_][A-Za-z0-9_-]*)$/.exec(d.label ?? '');
    if (m && d.position) found.push({ id: m[1], href: d.url ?? '', line: d.position.start.line });
  }
  found.sort((a, b) => a.line - b.line);
  const list: PageShortcut[] = [];
  for (const s of found) {
    if (list.some((x) => x.id === s.id)) warnings.push({ line: s.line, text: `duplicate shortcut @${s.id}; the first one is used` });
    else list.push(s);
  }
  return { list, rewrites };
}

/**
 * Parse an action document (spec §4.11; behaviour.md §3, §4). Pure: no I/O. Every problem is a
 * warning with the behaviour.md §3.10 text and its 1-based line (counting the frontmatter);
 * the document always parses.
 */
export function parseDocument(text: string): ActionDoc {
  const lines = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n').split('\n');
  const fm = parseFrontmatter(lines);
  const warnings: DocWarning[] = [...fm.warnings];
  // Frontmatter lines are blanked, not cut, so Markdown positions are whole-file line numbers.
  const tree = fromMarkdown(lines.map((l, i) => (i < fm.lines ? '' : l)).join('\n')) as Node;
  const c = collect(tree);
  const inCode = new Uint8Array(lines.length + 2);
  for (const k of c.code) for (let n = k.start; n <= k.end; n++) inCode[n] = 1;
  const fences = classify(c.code, warnings);
  const acts = actions(fences, warnings);
  const removed = new Uint8Array(lines.length + 2);
  for (let n = 1; n <= fm.lines; n++) removed[n] = 1;
  for (const f of fences) for (let n = f.start; n <= f.end; n++) removed[n] = 1;
  const directives: Directive[] = [];
  lines.forEach((l, i) => {
    const n = i + 1;
    if (removed[n] || inCode[n]) return;
    if (isDirectiveLine(l)) {
      const d = parseDirective(l, n);
      if (d.directive) directives.push(d.directive);
      if (d.warning) warnings.push(d.warning);
      removed[n] = 1;
    } else if (isBlockMarker(l)) removed[n] = 1;
  });
  const sc = shortcuts(c, warnings);
  const byLine = new Map<number, LinkRewrite[]>();
  for (const r of sc.rewrites) byLine.set(r.line, [...(byLine.get(r.line) ?? []), r]);
  const renderLines = lines.map((l, i) => (removed[i + 1] ? null : byLine.has(i + 1) ? rewriteLine(l, byLine.get(i + 1) ?? []) : l));
  let defaultAction = fm.defaultAction;
  if (defaultAction !== undefined && !acts.some((a) => a.id === defaultAction)) {
    warnings.push({ line: null, text: `default: action "${defaultAction}" is not declared` });
    defaultAction = undefined;
  }
  const h1 = c.headings.find((h) => h.depth === 1);
  return {
    frontmatter: fm.data,
    title: fm.title ?? (h1 ? h1.text.replace(/\s*\{#[^}\s]+\}\s*$/, '').trim() : null),
    ...(defaultAction !== undefined ? { defaultAction } : {}),
    env: fm.env,
    requires: fm.requires,
    actions: acts,
    headings: headingInfos(c.headings, lines.length),
    blocks: blockAnchors(lines, (n) => inCode[n] === 1 || n <= fm.lines),
    directives,
    shortcuts: sc.list,
    warnings: sortWarnings(warnings),
    rendered: collapse(renderLines),
    renderLines,
    source: text,
  };
}

/** Line-less warnings first (in order), then by line; stable. */
function sortWarnings(w: DocWarning[]): DocWarning[] {
  return w.map((x, i) => ({ x, i })).sort((a, b) => (a.x.line ?? 0) - (b.x.line ?? 0) || a.i - b.i).map((e) => e.x);
}

/** A warning as printed (behaviour.md §3.10): `warning: [line <n>: ]<text>`. */
export function warningLine(w: DocWarning): string {
  return `warning: ${w.line === null ? '' : `line ${w.line}: `}${w.text}`;
}
