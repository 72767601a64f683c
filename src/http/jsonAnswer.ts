import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Answer with a JSON body (HEAD: the status and headers only). Every JSON answer of the daemon goes
 * through here rather than Express's res.json, which looks the type up in the MIME table
 * (mime-types) to add its charset: naming the full type here keeps that table out of the daemon
 * until something needs it (scripts/bundle.mjs, "Packages the daemon needs only when a request does").
 */
export function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(req.method === 'HEAD' ? undefined : text);
}
