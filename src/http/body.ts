import type { IncomingMessage } from 'node:http';
import { LoomError } from '../domain/errors.js';
import { OVERSIZE_DRAIN_BYTES, REQUEST_BODY_BYTES } from '../domain/limits.js';
import { bodyIdentityRefusal } from './sandboxed.js';

/** 413 of behaviour.md §9.1, with `Connection: close`. */
export function tooLarge(cap: number, error = `Request body exceeds ${cap} bytes`): LoomError {
  return new LoomError(413, error, { headers: { Connection: 'close' } });
}

/**
 * Read a request body up to `cap` bytes (inclusive) without buffering past it (behaviour.md §9.1):
 * a larger Content-Length is refused at once; a chunked body is counted and refused when it passes
 * the cap, and the rest is drained up to 20 MiB before the socket is closed.
 */
export function readBody(req: IncomingMessage, cap = REQUEST_BODY_BYTES, overflow: () => LoomError = () => tooLarge(cap)): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > cap) {
    drain(req, 0);
    return Promise.reject(overflow());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > cap) {
        req.off('data', onData);
        req.off('end', onEnd);
        chunks.length = 0;
        drain(req, size);
        reject(overflow());
        return;
      }
      chunks.push(c);
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', reject);
  });
}

/** Discard the rest of a refused body; close the socket past OVERSIZE_DRAIN_BYTES. */
export function drain(req: IncomingMessage, already: number): void {
  let seen = already;
  req.on('data', (c: Buffer) => {
    seen += c.length;
    if (seen > OVERSIZE_DRAIN_BYTES) req.socket.destroy();
  });
  req.resume();
}

/**
 * Parse a JSON object body (behaviour.md §9.1): empty counts as `{}`; unparseable or not an object
 * is 400 with `invalidMessage`.
 */
export async function readJsonObject(req: IncomingMessage, invalidMessage = 'Invalid JSON body'): Promise<Record<string, unknown>> {
  const text = (await readBody(req)).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LoomError(400, invalidMessage);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LoomError(400, invalidMessage);
  // behaviour.md §15.3: from inside the sandbox, a body may name only the agent itself.
  const refusal = bodyIdentityRefusal(req, value as Record<string, unknown>);
  if (refusal) throw refusal;
  return value as Record<string, unknown>;
}
