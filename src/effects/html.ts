import type TurndownService from 'turndown';

/** Elements dropped before conversion (behaviour.md §3.3). */
const REMOVED = ['script', 'style', 'noscript', 'iframe', 'svg', 'nav', 'header', 'footer', 'aside', 'form', 'head', 'title'] as const;

interface DomNode {
  nodeName: string;
  parentNode: DomNode | null;
}

function hasAncestor(node: DomNode, name: string): boolean {
  for (let p = node.parentNode; p; p = p.parentNode) if (p.nodeName === name) return true;
  return false;
}

let turndown: Promise<typeof TurndownService> | undefined;

/** turndown (and its DOM parser) load on the first HTML page: most daemons never see one (docs/architecture.md, "Resident memory"). */
function loadTurndown(): Promise<typeof TurndownService> {
  turndown ??= import('turndown').then((m) => m.default).catch((err: unknown) => {
    turndown = undefined;
    throw err;
  });
  return turndown;
}

/**
 * HTML to Markdown (behaviour.md §3.3): ATX headings, fenced code, links and images kept; the
 * elements of REMOVED dropped; content taken from the first `<main>`, else the first `<article>`,
 * else the whole body. The first outermost `<main>`/`<article>` is captured while turndown walks
 * the tree, so one conversion gives all three candidates.
 */
export async function htmlToMarkdown(html: string): Promise<string> {
  const Turndown = await loadTurndown();
  const td = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  td.remove([...REMOVED] as unknown as TurndownService.Filter);
  const captured: Record<'MAIN' | 'ARTICLE', string | undefined> = { MAIN: undefined, ARTICLE: undefined };
  for (const name of ['MAIN', 'ARTICLE'] as const) {
    td.addRule(`loom-${name}`, {
      filter: (node) => (node as unknown as DomNode).nodeName === name,
      replacement: (content, node) => {
        if (captured[name] === undefined && !hasAncestor(node as unknown as DomNode, name)) captured[name] = content;
        return `\n\n${content}\n\n`;
      },
    });
  }
  const all = td.turndown(html);
  const picked = captured.MAIN ?? captured.ARTICLE;
  return (picked ?? all).replace(/\n{3,}/g, '\n\n').trim();
}
