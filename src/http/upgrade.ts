import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { LoomError } from '../domain/errors.js';
import { refuseUpgrade } from './errors.js';
import { CORS_HEADERS, hostOriginRefusal } from './guard.js';

/** Takes an upgraded connection (the inspector's WebSocket, behaviour.md §13.1). */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * The HTTP `upgrade` hook (behaviour.md §9.2): every upgrade request passes the one Host/Origin
 * guard first and is refused with 403 and the socket closed before any frame; an upgrade to a path
 * with no handler is 404 after the checks. Handlers are keyed by exact path. `cors` are the wire's
 * CORS headers (behaviour.md §11).
 */
export function upgradeListener(allowedOrigins: readonly string[], handlers: ReadonlyMap<string, UpgradeHandler>, cors: Readonly<Record<string, string>> = CORS_HEADERS) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    // A client that resets mid-answer must not raise an unhandled 'error'.
    socket.on('error', () => socket.destroy());
    const refusal = hostOriginRefusal(req, allowedOrigins);
    if (refusal) {
      refuseUpgrade(socket, refusal, cors);
      return;
    }
    const url = req.url ?? '/';
    const path = url.includes('?') ? url.slice(0, url.indexOf('?')) : url;
    const handler = handlers.get(path);
    if (!handler) {
      refuseUpgrade(socket, new LoomError(404, `Not found: ${req.method ?? 'GET'} ${path}`), cors);
      return;
    }
    handler(req, socket, head);
  };
}
