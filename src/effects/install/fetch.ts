import { createWriteStream } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LoomError } from '../../domain/errors.js';
import { httpsRule, installError } from '../../domain/install.js';
import { INSTALL_FETCH_TIMEOUT_MS, INSTALL_FILE_BYTES, INSTALL_MAX_REDIRECTS, INSTALL_TOTAL_BYTES } from '../../domain/limits.js';
import { networkReason, openGet, readBody, type Exchange } from '../httpGet.js';

/**
 * The fetches of an install (behaviour.md §7.1, §7.3, §7.4): every hop under the HTTPS rule, 30 s
 * per request, 5 redirects; documents and manifests buffered up to 5 MiB; package files streamed to
 * disk (never held in memory) with a 5 MiB cap per file and a 50 MiB budget per package. Failures
 * are thrown as install errors with the texts of §7.4 step 1: `Cannot fetch <url>: HTTP <status>` /
 * `Cannot fetch <url>: <reason>`.
 */
export interface FetchContext {
  signal: AbortSignal;
  /** `loom/<version>` */
  userAgent: string;
  /** Tests shorten it; behaviour.md §1.8 says 30 s. */
  timeoutMs?: number;
  /** `Authorization` value and the hops it may be sent to (GitHub token rules, §7.3). */
  auth?: { value: string; to(url: URL): boolean };
}

/** The bytes budget of one package (behaviour.md §1.8: 50 MiB in all). */
export interface Budget {
  used: number;
  readonly max: number;
}

/** A fresh budget of INSTALL_TOTAL_BYTES. */
export function packageBudget(max = INSTALL_TOTAL_BYTES): Budget {
  return { used: 0, max };
}

/** behaviour.md §7.4: a package over the total budget. */
export const tooLargePackage = () => installError(`Package is larger than ${INSTALL_TOTAL_BYTES / 1048576} MiB`);
const tooLargeFile = (url: string) => installError(`Cannot fetch ${url}: file is larger than ${INSTALL_FILE_BYTES / 1048576} MiB`);
const timeoutText = (ms: number) => `timed out after ${ms / 1000} s`;

/** Why the install stopped when its signal fired (the topic was closed, the agent deleted). */
export const cancelled = () => installError('Install cancelled', 'CONFLICT');

async function open(url: string, accept: Record<string, string>, ctx: FetchContext): Promise<Exchange> {
  const timeoutMs = ctx.timeoutMs ?? INSTALL_FETCH_TIMEOUT_MS;
  const r = await openGet(url, {
    headers: { ...accept, 'User-Agent': ctx.userAgent }, timeoutMs, maxRedirects: INSTALL_MAX_REDIRECTS,
    allow: httpsRule, signal: ctx.signal, ...(ctx.auth ? { auth: ctx.auth } : {}),
  });
  if (r.ok) return r.ex;
  if (r.kind === 'aborted') throw cancelled();
  if (r.kind === 'refused') throw installError(r.message);
  throw installError(`Cannot fetch ${url}: ${r.kind === 'timeout' ? timeoutText(timeoutMs) : r.message}`);
}

/** A buffered GET: status, content type and body (≤ 5 MiB); non-2xx statuses are returned, not thrown. */
export async function getBuffered(url: string, headers: Record<string, string>, ctx: FetchContext): Promise<{ status: number; contentType: string; body: Buffer; url: string }> {
  const ex = await open(url, headers, ctx);
  try {
    const body = await readBody(ex.res, INSTALL_FILE_BYTES);
    if (body === null) throw installError(`Cannot fetch ${url}: larger than ${INSTALL_FILE_BYTES / 1048576} MiB`);
    return { status: ex.res.statusCode ?? 0, contentType: String(ex.res.headers['content-type'] ?? ''), body, url: ex.url.href };
  } catch (err) {
    throw rethrow(err, url, ex, ctx);
  } finally {
    ex.close();
  }
}

/** The install error for a failure while a body was read. */
function rethrow(err: unknown, url: string, ex: Exchange, ctx: FetchContext): unknown {
  if (err instanceof LoomError) return err;
  if (ex.timedOut()) return installError(`Cannot fetch ${url}: ${timeoutText(ctx.timeoutMs ?? INSTALL_FETCH_TIMEOUT_MS)}`);
  if (ctx.signal.aborted) return cancelled();
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ECONNRESET' || e?.message === 'aborted' || e?.code === 'ERR_STREAM_PREMATURE_CLOSE') {
    return installError(`Cannot fetch ${url}: connection closed before the end of the file`);
  }
  return installError(`Cannot fetch ${url}: ${networkReason(err)}`);
}

/** GET of a package file that must succeed (2xx) into memory (string.md, ≤ 5 MiB). */
export async function fetchFileBuffer(url: string, ctx: FetchContext): Promise<Buffer> {
  const r = await getBuffered(url, { Accept: '*/*' }, ctx);
  if (r.status < 200 || r.status > 299) throw installError(`Cannot fetch ${url}: HTTP ${r.status}`);
  return r.body;
}

/** Counts the bytes that flow through, enforcing the per-file cap and the package budget. */
class Meter extends Transform {
  private n = 0;
  constructor(private readonly url: string, private readonly budget: Budget, private readonly onBytes: (n: number) => void) {
    super();
  }
  _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.n += chunk.length;
    this.budget.used += chunk.length;
    if (this.n > INSTALL_FILE_BYTES) return done(tooLargeFile(this.url));
    if (this.budget.used > this.budget.max) return done(tooLargePackage());
    this.onBytes(chunk.length);
    done(null, chunk);
  }
}

/**
 * Stream a package file to `dest` (created exclusively, mode 0644): any content type accepted, 2xx only, at most
 * 5 MiB, counted against the package budget; `onBytes` sees each chunk as it is written.
 */
export async function downloadToFile(url: string, dest: string, o: { ctx: FetchContext; budget: Budget; onBytes(n: number): void }): Promise<void> {
  const ex = await open(url, { Accept: '*/*' }, o.ctx);
  try {
    const status = ex.res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      ex.res.resume();
      throw installError(`Cannot fetch ${url}: HTTP ${status}`);
    }
    const declared = Number(ex.res.headers['content-length']);
    if (Number.isFinite(declared) && declared > INSTALL_FILE_BYTES) {
      ex.res.destroy();
      throw tooLargeFile(url);
    }
    await pipeline(ex.res, new Meter(url, o.budget, o.onBytes), createWriteStream(dest, { flags: 'wx', mode: 0o644 }));
  } catch (err) {
    throw rethrow(err, url, ex, o.ctx);
  } finally {
    ex.close();
  }
}
