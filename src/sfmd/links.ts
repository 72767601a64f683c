import { fromMarkdown } from 'mdast-util-from-markdown';
import type { Directive, DocWarning } from './types.js';
import { slug } from './anchors.js';

const DIRECTIVE_RE = /^\[!([^\]]*)\]\(([^)]*)\)$/;
/** Page shortcut ids (behaviour.md §3.7): no dots, since dotted ids are menu entries. */
export const SHORTCUT_ID = '[A-Za-z0-9_][A-Za-z0-9_-]*';
const LINK_TEXT_RE = new RegExp(`^@(${SHORTCUT_ID})\\s+(\\S[\\s\\S]*)$`);

/** True when a (trimmed) line has the directive form `[!<name>…](<path>)` (behaviour.md §3.8). */
export function isDirectiveLine(line: string): boolean {
  return DIRECTIVE_RE.test(line.trim());
}

/** Parse a directive line; known ones become a Directive, others a warning (behaviour.md §3.8). */
export function parseDirective(line: string, lineNo: number): { directive?: Directive; warning?: DocWarning } {
  const t = line.trim();
  const m = DIRECTIVE_RE.exec(t) as RegExpExecArray;
  const name = m[1].trim();
  const path = m[2].trim().replace(/\s+"[^"]*"$/, '');
  const nav = /^(nav|menu):([A-Za-z0-9_-]+)$/.exec(name);
  if (nav && path) return { directive: { name: 'nav', arg: nav[2], path, line: lineNo } };
  if (name === 'requirements' && path) return { directive: { name: 'requirements', path, line: lineNo } };
  return { warning: { line: lineNo, text: `unsupported directive ${t}; ignored` } };
}

/** Split a link's text `@id Label` into id and label, or null when it is an ordinary link. */
export function shortcutText(text: string): { id: string; label: string } | null {
  const m = LINK_TEXT_RE.exec(text.trim());
  return m ? { id: m[1], label: m[2].trim() } : null;
}

interface MdNode {
  type: string;
  value?: string;
  url?: string;
  children?: MdNode[];
}

/** Plain text of a Markdown node (text, inline code and their nested children). */
export function plainText(node: MdNode): string {
  if (typeof node.value === 'string' && (node.type === 'text' || node.type === 'inlineCode')) return node.value;
  return (node.children ?? []).map(plainText).join('');
}

/** One menu entry of a nav file (behaviour.md §3.8). */
export interface NavEntry {
  id: string;
  label: string;
  href: string;
}

/** Most entries a menu takes (behaviour.md §3.8). */
export const NAV_MAX_ENTRIES = 200;

/**
 * The entries of a nav file (behaviour.md §3.8): every Markdown link in order; `[@id Label](href)`
 * gives `id`, `[Label](href)` the slug of the label (duplicates `-2`, `-3` …). At most 200.
 */
export function parseNavFile(text: string): NavEntry[] {
  const links: Array<{ text: string; href: string }> = [];
  const walk = (n: MdNode) => {
    if (n.type === 'link') links.push({ text: plainText(n), href: n.url ?? '' });
    else for (const c of n.children ?? []) walk(c);
  };
  walk(fromMarkdown(text.replace(/\r\n?/g, '\n')) as MdNode);
  const out: NavEntry[] = [];
  const used = new Map<string, number>();
  for (const l of links) {
    if (out.length >= NAV_MAX_ENTRIES) break;
    const sc = shortcutText(l.text);
    let id = sc ? sc.id : slug(l.text.trim());
    const label = sc ? sc.label : l.text.trim();
    if (id === '') id = 'entry';
    const n = (used.get(id) ?? 0) + 1;
    used.set(id, n);
    out.push({ id: n === 1 ? id : `${id}-${n}`, label, href: l.href });
  }
  return out;
}
