import { createHash } from 'node:crypto';
import { isFileRefusal, notRegularText } from '../../domain/agentFile.js';
import { fail, type CommandResult } from '../../domain/result.js';
import { readAgentFile } from '../../effects/agentFile.js';
import { fetchDocument } from '../../effects/docFetch.js';
import { classifyRemote, jsonDocument, type RemoteDoc } from '../../effects/remoteDoc.js';
import type { CommandContext, DocumentServices } from '../types.js';
import { httpRule } from './targets.js';

/** Tunables of document loading (behaviour.md §1.8); tests shorten the timeout through services.documents. */
export type DocsConfig = DocumentServices['config'];
/** behaviour.md §1.8: document size limit (local or fetched). */
export const DOC_MAX_BYTES = 5 * 1024 * 1024;
/** behaviour.md §2.5: the text check looks at the first 8 KiB. */
export const TEXT_SNIFF_BYTES = 8192;

/** behaviour.md §1.8: 30 s per fetch, 5 MiB, 5 redirects. */
export function defaultDocsConfig(): DocsConfig {
  return { fetchTimeoutMs: 30000, maxBytes: DOC_MAX_BYTES, maxRedirects: 5 };
}

/** The config in force (defaults of behaviour.md §1.8 when the feature registered none). */
export function docsConfig(ctx: CommandContext): DocsConfig {
  return ctx.services.documents?.config ?? defaultDocsConfig();
}

/** True when the first 8 KiB hold a NUL byte (behaviour.md §2.5 "not a text file"). */
export function looksBinary(buf: Buffer): boolean {
  return buf.subarray(0, TEXT_SNIFF_BYTES).includes(0);
}

/**
 * A local document as UTF-8 text (behaviour.md §3.2: over 5 MiB or binary is refused; §16: anything
 * but a regular file too). `abs` is the resolved path. Throws for a missing file as reading did.
 */
export function readLocalText(abs: string, display: string): { text: string; hash: string } | CommandResult {
  const r = readAgentFile(abs, DOC_MAX_BYTES);
  if (isFileRefusal(r)) {
    if (r.refused === 'directory') return fail('INVALID_PATH', `Is a directory: ${display}`);
    if (r.refused === 'not_regular') return fail('INVALID_PATH', notRegularText(display));
    if (r.refused === 'too_large') return fail('INVALID_TARGET', `Not a text document: ${display} (over 5 MiB)`);
    throw Object.assign(new Error(`ENOENT: no such file or directory, open '${abs}'`), { code: 'ENOENT' });
  }
  if (looksBinary(r.data)) return fail('INVALID_TARGET', `Not a text document: ${display} (binary)`);
  return { text: r.data.toString('utf8'), hash: sha256(r.data) };
}

/** Hex SHA-256 of file content (read records, behaviour.md §2.5). */
export function sha256(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

/** A fetched remote document, classified (behaviour.md §3.3). */
export type Remote = RemoteDoc;

const ACCEPT = 'text/markdown, text/plain;q=0.9, text/html;q=0.8, application/json;q=0.7';

/** GET a remote document with the headers, limits and error texts of behaviour.md §3.3. */
export async function fetchRemote(ctx: CommandContext, url: string): Promise<Remote | CommandResult> {
  const cfg = docsConfig(ctx);
  const r = await fetchDocument(url, {
    headers: { Accept: ACCEPT, 'User-Agent': `loom/${ctx.services.info.version}` },
    timeoutMs: cfg.fetchTimeoutMs, maxBytes: cfg.maxBytes, maxRedirects: cfg.maxRedirects,
    allow: httpRule, signal: ctx.signal,
  });
  if (!r.ok) {
    if (r.kind === 'timeout') return fail('TIMEOUT', `Timed out after ${cfg.fetchTimeoutMs / 1000} s fetching ${url}`);
    if (r.kind === 'too-large') return fail('INVALID_TARGET', `Not a text document: ${url} (over 5 MiB)`);
    if (r.kind === 'refused') return fail('INVALID_TARGET', r.message);
    return fail('HTTP_ERROR', `Network error fetching ${url}: ${r.message}`);
  }
  if (r.status === 404) return fail('NOT_FOUND', `Not found: ${url}`);
  if (r.status < 200 || r.status > 299) return fail('HTTP_ERROR', `HTTP ${r.status} fetching ${url}`);
  if (looksBinary(r.body)) return fail('INVALID_TARGET', `Not a text document: ${url} (binary)`);
  return classifyRemote(r.body.toString('utf8'), r.contentType, r.url);
}

export { jsonDocument };
