/**
 * Rendering of behaviour.md §3.4: the document without frontmatter, `act.*` fences, directive
 * lines and block markers; author shortcut links `[@id Label](href)` shown as `[Label][@id]`;
 * runs of blank lines left by removals collapsed to one.
 */

/**
 * Join per-line render results (`null` = removed line) into Markdown: a blank line directly
 * after a removal is dropped when the output already ends with a blank line; leading and trailing
 * blank lines are dropped.
 */
export function collapse(lines: ReadonlyArray<string | null>): string {
  const out: string[] = [];
  let removed = false;
  for (const l of lines) {
    if (l === null) {
      removed = true;
      continue;
    }
    const blank = l.trim() === '';
    if (blank && removed && (out.length === 0 || out[out.length - 1].trim() === '')) continue;
    out.push(l);
    if (!blank) removed = false;
  }
  while (out.length > 0 && out[0].trim() === '') out.shift();
  while (out.length > 0 && out[out.length - 1].trim() === '') out.pop();
  return out.join('\n');
}

/** A `[@id Label](href)` link on one line, by 1-based columns [start, end). */
export interface LinkRewrite {
  line: number;
  startCol: number;
  endCol: number;
  id: string;
  label: string;
}

/** Apply link rewrites to one line (right to left so columns stay valid). */
export function rewriteLine(text: string, rewrites: LinkRewrite[]): string {
  let out = text;
  for (const r of [...rewrites].sort((a, b) => b.startCol - a.startCol)) {
    out = out.slice(0, r.startCol - 1) + `[${r.label}][@${r.id}]` + out.slice(r.endCol - 1);
  }
  return out;
}

/** The rendered Markdown of lines `start`..`end` (1-based, inclusive) of a parsed document. */
export function renderRange(renderLines: ReadonlyArray<string | null>, start: number, end: number): string {
  return collapse(renderLines.slice(Math.max(0, start - 1), Math.max(0, end)));
}
