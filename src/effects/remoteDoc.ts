import { htmlToMarkdown } from './html.js';

/**
 * What a fetched body is (behaviour.md §3.3 content handling), shared by `/open` of a URL and
 * `/install` of a URL (§7.4 step 6): declared JSON (or untyped text that parses as a JSON object or
 * array) is JSON; `text/html` (or an untyped page that starts like one) is converted to Markdown;
 * everything else is Markdown text.
 */
export type RemoteDoc =
  | { kind: 'json'; value: unknown; raw: string; url: string }
  | { kind: 'html'; text: string; raw: string; url: string }
  | { kind: 'text'; text: string; raw: string; url: string };

function parseJson(raw: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch {
    // Not JSON: the caller treats the text as a document.
    return { ok: false };
  }
}

/** Classify a text body by its Content-Type and first characters. */
export async function classifyRemote(raw: string, contentType: string, url: string): Promise<RemoteDoc> {
  const ct = contentType.toLowerCase();
  const declaredJson = /[/+]json\b/.test(ct);
  if (declaredJson || ((ct === '' || ct.startsWith('text/plain')) && /^\s*[[{]/.test(raw))) {
    const value = parseJson(raw);
    // Declared JSON that does not parse is shown as text, like any other text.
    if (value.ok) return { kind: 'json', value: value.value, raw, url };
  }
  if (ct.includes('html') || (ct === '' && /^\s*<(!doctype html|html)/i.test(raw))) return { kind: 'html', text: await htmlToMarkdown(raw), raw, url };
  return { kind: 'text', text: raw, raw, url };
}

/** A non-manifest JSON value shown as a pretty-printed fenced block (behaviour.md §3.3). */
export function jsonDocument(value: unknown): string {
  return '```json\n' + JSON.stringify(value, null, 2) + '\n```';
}
