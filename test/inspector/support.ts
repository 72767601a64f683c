import { connect } from 'node:net';
import { WebSocket } from 'ws';
import type { WireJson } from '../helpers/json.js';

/** A WebSocket session on /inspect/ws that keeps every message it receives (parsed and raw). */
export interface InspectorSession {
  messages: Array<Record<string, WireJson>>;
  raw: string[];
  ws: WebSocket;
  /** Resolves once a message satisfies `ok` (checked against every message so far, then new ones). */
  until(ok: (m: Record<string, WireJson>) => boolean, what?: string): Promise<Record<string, WireJson>>;
  close(): Promise<void>;
}

/** Open /inspect/ws (with `query`, e.g. `?coalesce=1`) and wait for the first message (the snapshot). */
export async function openInspector(port: number, headers: Record<string, string> = {}, query = ''): Promise<InspectorSession> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/inspect/ws${query}`, { headers });
  const messages: Array<Record<string, WireJson>> = [];
  const raw: string[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data) => {
    raw.push(data.toString());
    // The snapshot is one object, each later frame an array of live messages (src/inspector/feed.ts).
    const parsed = JSON.parse(data.toString());
    if (Array.isArray(parsed)) messages.push(...parsed);
    else messages.push(parsed);
    for (const w of [...waiters]) w();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  const session: InspectorSession = {
    messages, raw, ws,
    until(ok, what = 'message') {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = messages.find(ok);
          if (!hit) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
          return true;
        };
        // A bound on the wait so a missing message fails with its name instead of a jest timeout.
        const timer = setTimeout(() => { waiters.delete(check); reject(new Error(`no ${what} in ${JSON.stringify(messages).slice(0, 2000)}`)); }, 15000);
        if (!check()) waiters.add(check);
      });
    },
    close() {
      return new Promise((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        ws.once('close', () => resolve());
        ws.close();
      });
    },
  };
  await session.until((m) => m.type === 'snapshot', 'snapshot');
  return session;
}

/** Send a raw upgrade request to /inspect/ws; resolves with every byte the server sent until it closed. */
export function rawUpgrade(port: number, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => { got += d.toString('latin1'); });
    s.on('close', () => resolve(got));
    s.on('error', reject);
    const lines = [
      'GET /inspect/ws HTTP/1.1', 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    s.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}
