import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { InspectorFeed } from './feed.js';

/**
 * GET /inspect/ws (behaviour.md §13.1): the WebSocket of the inspector, taken over from the HTTP
 * `upgrade` hook after its Host/Origin guard. The page never sends anything that matters, so
 * incoming frames are capped small and ignored.
 */
export function inspectorSocket(feed: InspectorFeed): { handle(req: IncomingMessage, socket: Duplex, head: Buffer): void; close(): void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4096, perMessageDeflate: false, clientTracking: false });
  return {
    handle(req, socket, head) {
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('close', () => feed.detach(ws));
        // A reset connection must not raise an unhandled 'error'; 'close' follows and detaches it.
        ws.on('error', () => ws.terminate());
        feed.attach(ws);
      });
    },
    close() {
      feed.closeAll();
      wss.close();
    },
  };
}
