import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoomError } from '../domain/errors.js';
import type { FileSink, FsOperations, OpenFile } from '../domain/fsPlane.js';
import { FS_MAX_BYTES } from '../domain/limits.js';
import { drain } from './body.js';

/**
 * Moving /fs bytes between a socket and a file (spec §4.1 PUT and GET), with the fs.max_bytes cap
 * of spec §8 enforced while the body streams.
 */

/** Files up to this size are read in one call and sent with `res.end`; larger ones stream. */
const SMALL_FILE = 64 * 1024;

/**
 * Stream the request body into `sink`, counting bytes: past FS_MAX_BYTES the rest is drained (not
 * buffered) and `tooLarge()` is thrown; a client that goes away rejects. Returns the size. The promise
 * settles only when no write is in flight, so the caller may close the file (a write still queued on
 * the thread pool could otherwise land in whatever file reuses the fd number).
 */
export function pump(req: IncomingMessage, sink: FileSink, tooLarge: () => LoomError): Promise<number> {
  return new Promise((resolve, reject) => {
    let size = 0;
    let writing = false;
    let outcome: { err: Error | null } | null = null;
    const settle = () => {
      if (writing || !outcome) return;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onError);
      if (outcome.err) reject(outcome.err);
      else resolve(size);
    };
    const finish = (err: Error | null) => {
      if (outcome) return;
      outcome = { err };
      if (err) drain(req, size);
      settle();
    };
    const onData = (chunk: Buffer) => {
      if (outcome) return;
      size += chunk.length;
      if (size > FS_MAX_BYTES) return finish(tooLarge());
      req.pause();
      writing = true;
      sink.write(chunk, (err) => {
        writing = false;
        if (err) finish(err);
        else if (!outcome) req.resume();
        settle();
      });
    };
    // 'end' may come while the last chunk is still being written: settle() waits for it.
    const onEnd = () => finish(null);
    const onClose = () => { if (!req.complete) finish(new Error('client closed the upload')); };
    const onError = (err: Error) => finish(err);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.on('error', onError);
  });
}

/** Send an opened file (GET 200): small files in one write, larger ones streamed; the file is closed. */
export function sendFile(res: ServerResponse, f: OpenFile, ops: FsOperations): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/octet-stream');
  res.setHeader('Last-Modified', new Date(f.mtimeMs).toUTCString());
  if (f.size <= SMALL_FILE) {
    const buf = ops.readWhole(f);
    res.setHeader('Content-Length', buf.length);
    res.end(buf);
    return;
  }
  res.setHeader('Content-Length', f.size);
  const stream = ops.stream(f);
  let sent = 0;
  stream.on('data', (c: Buffer) => { sent += c.length; });
  stream.on('error', (err) => res.destroy(err));
  // A file truncated by someone else mid-read must not leave the client waiting for missing bytes.
  stream.on('end', () => { if (sent < f.size) res.destroy(); });
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}
