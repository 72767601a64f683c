import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import type { InspectorFeed } from './feed.js';

/** Whether the upgrade's query asks for the coalesced feed (`?coalesce=1`, feed.ts). */
export function wantsCoalesced(url: string | undefined): boolean {
  const q = url?.indexOf('?') ?? -1;
  return q >= 0 && new URLSearchParams(url?.slice(q + 1)).get('coalesce') === '1';
}

/**
 * GET /inspect/ws (behaviour.md §13.1): the WebSocket of the inspector, taken over from the HTTP
 * `upgrade` hook after its Host/Origin guard. The page never sends anything that matters, so
 * incoming frames are capped small and ignored. `ws` loads on the first upgrade: most daemons are
 * never watched, and a cold start should not pay for it (bench/scale).
 */
export function inspectorSocket(feed: InspectorFeed): { handle(req: IncomingMessage, socket: Duplex, head: Buffer): void; close(): void } {
  let wss: Promise<WebSocketServer> | undefined;
  let closed = false;
  const server = (): Promise<WebSocketServer> => (wss ??= import('ws').then(
    ({ WebSocketServer: Server }) => new Server({ noServer: true, maxPayload: 4096, perMessageDeflate: false, clientTracking: false }),
  ));
  return {
    handle(req, socket, head) {
      server().then((s) => {
        if (closed) return socket.destroy();
        s.handleUpgrade(req, socket, head, (ws) => {
          ws.on('close', () => feed.detach(ws));
          // A reset connection must not raise an unhandled 'error'; 'close' follows and detaches it.
          ws.on('error', () => ws.terminate());
          feed.attach(ws, { coalesce: wantsCoalesced(req.url) });
        });
      }).catch((err: unknown) => {
        process.emitWarning(`inspector WebSocket unavailable: ${err instanceof Error ? err.message : String(err)}`);
        socket.destroy();
      });
    },
    close() {
      closed = true;
      feed.closeAll();
      void wss?.then((s) => s.close());
    },
  };
}
