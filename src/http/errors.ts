import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { LoomError, errorMessage } from '../domain/errors.js';
import { CORS_HEADERS } from './guard.js';
import { sendJson } from './jsonAnswer.js';

/** A rendered error: status, extra headers and the JSON body of spec §4 (`{error, message?, reason?}`). */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/**
 * The one error renderer (architecture.md "one error type, one renderer"): a LoomError answers with
 * its status, headers and body; a client error thrown by a library (status 4xx) with its message;
 * anything else is 500 `Internal error: <message>` (behaviour.md §9.1, no stack).
 */
export function errorAnswer(err: unknown): ErrorAnswer {
  if (err instanceof LoomError) return { status: err.status, headers: { ...(err.headers ?? {}) }, body: err.body() };
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return { status, headers: {}, body: { error: errorMessage(err) } };
  return { status: 500, headers: {}, body: { error: `Internal error: ${errorMessage(err)}` } };
}

/**
 * Write an error on a response (the Express app and the /fs fast path alike). HEAD gets the status
 * and headers only. When the answer has already started, the connection is cut, so a truncated
 * answer never looks complete.
 */
export function renderError(req: IncomingMessage, res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const a = errorAnswer(err);
  for (const [k, v] of Object.entries(a.headers)) res.setHeader(k, v);
  sendJson(req, res, a.status, a.body);
}

/**
 * Write an error on the raw socket of a refused HTTP upgrade (behaviour.md §9.2, §13.1: before any
 * WebSocket frame), with the CORS headers every answer carries, then close the socket.
 */
export function refuseUpgrade(socket: Duplex, err: unknown, cors: Readonly<Record<string, string>> = CORS_HEADERS): void {
  const a = errorAnswer(err);
  const text = JSON.stringify(a.body);
  const headers: Record<string, string | number> = {
    ...cors, ...a.headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), Connection: 'close',
  };
  const head = [`HTTP/1.1 ${a.status} ${STATUS_CODES[a.status] ?? ''}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  socket.end(`${head}\r\n\r\n${text}`, () => socket.destroy());
}
