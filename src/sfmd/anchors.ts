import type { BlockAnchor, HeadingInfo } from './types.js';

/**
 * Slug of a heading text (behaviour.md §3.5): lower-case; keep Unicode letters, digits, spaces,
 * `-` and `_`; drop the rest; spaces become `-`.
 */
export function slug(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
}

/** A heading as the Markdown tree gives it: depth, plain text and 1-based line. */
export interface RawHeading {
  depth: number;
  text: string;
  line: number;
}

/**
 * Headings with ids and block ranges (behaviour.md §3.5): an explicit trailing `{#id}` wins,
 * else the slug, de-duplicated with `-1`, `-2` … in document order. A block runs to the line
 * before the next heading of the same or a higher level, or to `lastLine`. Headings whose id
 * would be empty are not anchors.
 */
export function headingInfos(raw: RawHeading[], lastLine: number): HeadingInfo[] {
  const seen = new Map<string, number>();
  const out: HeadingInfo[] = [];
  raw.forEach((h, i) => {
    let end = lastLine;
    for (let j = i + 1; j < raw.length; j++) {
      if (raw[j].depth <= h.depth) {
        end = raw[j].line - 1;
        break;
      }
    }
    const explicit = /\s*\{#([^}\s]+)\}\s*$/.exec(h.text);
    const text = explicit ? h.text.slice(0, explicit.index).trim() : h.text.trim();
    let id: string;
    if (explicit) id = explicit[1];
    else {
      const base = slug(text);
      const n = seen.get(base);
      seen.set(base, (n ?? -1) + 1);
      id = n === undefined ? base : `${base}-${n + 1}`;
    }
    if (id !== '') out.push({ depth: h.depth, text, id, startLine: h.line, endLine: Math.max(end, h.line), ...(explicit ? { explicit: true } : {}) });
  });
  return out;
}

const OPEN_RE = /^<!--\s*#([^\s>]+)\s*-->$/;
const CLOSE_RE = /^<!--\s*\/([^\s>]+)\s*-->$/;

/** True when a (trimmed) line is a block marker `<!-- #id -->` or `<!-- /id -->`. */
export function isBlockMarker(line: string): boolean {
  const t = line.trim();
  return OPEN_RE.test(t) || CLOSE_RE.test(t);
}

/**
 * Block-marker anchors (behaviour.md §3.5): content between `<!-- #id -->` and `<!-- /id -->`
 * (each a whole line). An unclosed marker runs to the end of the document. `skip(line)` tells
 * which lines are inside code and never markers.
 */
export function blockAnchors(lines: string[], skip: (lineNo: number) => boolean): BlockAnchor[] {
  const open = new Map<string, number>();
  const out: BlockAnchor[] = [];
  lines.forEach((l, i) => {
    const n = i + 1;
    if (skip(n)) return;
    const t = l.trim();
    const o = OPEN_RE.exec(t);
    if (o) {
      if (!open.has(o[1]) && !out.some((b) => b.id === o[1])) open.set(o[1], n);
      return;
    }
    const c = CLOSE_RE.exec(t);
    const start = c ? open.get(c[1]) : undefined;
    if (c && start !== undefined) {
      out.push({ id: c[1], startLine: start + 1, endLine: n - 1 });
      open.delete(c[1]);
    }
  });
  for (const [id, start] of open) out.push({ id, startLine: start + 1, endLine: lines.length });
  return out.sort((a, b) => a.startLine - b.startLine);
}

/** Where an anchor's lines are (block markers first, then headings: behaviour.md §3.5). */
export function findAnchor(doc: { blocks: BlockAnchor[]; headings: HeadingInfo[] }, id: string): { startLine: number; endLine: number } | undefined {
  return doc.blocks.find((b) => b.id === id) ?? doc.headings.find((h) => h.explicit && h.id === id) ?? doc.headings.find((h) => h.id === id);
}

/** All anchor ids in document order, without duplicates (for the NOT_FOUND detail line). */
export function anchorIds(doc: { blocks: BlockAnchor[]; headings: HeadingInfo[] }): string[] {
  const all = [...doc.blocks.map((b) => ({ id: b.id, at: b.startLine - 1 })), ...doc.headings.map((h) => ({ id: h.id, at: h.startLine }))];
  return [...new Set(all.sort((a, b) => a.at - b.at).map((x) => x.id))];
}
