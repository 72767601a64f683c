import { installError } from '../../domain/install.js';
import { isManifest, validateManifest, type Manifest } from '../../sfmd/manifest.js';
import { classifyRemote, jsonDocument } from '../remoteDoc.js';
import { getBuffered, type FetchContext } from './fetch.js';

/** What an http(s) source is (behaviour.md §7.4 steps 1–2, 6). */
export type UrlSource =
  | { kind: 'manifest'; url: string; manifest: Manifest }
  | { kind: 'doc'; url: string; text: string };

/** spec §4.13 item 3: the Accept header of a URL source. */
const ACCEPT = 'application/json, text/markdown, text/plain';

/**
 * Fetch a URL source (30 s, 5 MiB) and tell a manifest (a JSON object with a `files` array, validated
 * before anything else is fetched) from a single document (Markdown, text, HTML converted to
 * Markdown, JSON shown as a fenced block).
 */
export async function readUrlSource(url: string, ctx: FetchContext): Promise<UrlSource> {
  const r = await getBuffered(url, { Accept: ACCEPT }, ctx);
  if (r.status < 200 || r.status > 299) throw installError(`Cannot fetch ${url}: HTTP ${r.status}`);
  if (r.body.subarray(0, 8192).includes(0)) throw installError(`Cannot fetch ${url}: not a text document`);
  const doc = await classifyRemote(r.body.toString('utf8'), r.contentType, r.url);
  if (doc.kind === 'json' && isManifest(doc.value)) {
    const v = validateManifest(doc.value, url);
    if (!v.ok) throw installError(v.reason);
    return { kind: 'manifest', url, manifest: v.manifest };
  }
  return { kind: 'doc', url, text: doc.kind === 'json' ? jsonDocument(doc.value) : doc.text };
}
