import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { startApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let wss: WebSocketServer | undefined;
beforeAll(async () => {
  t = await startApp({ env: { SVC_ALLOWED_ORIGINS: 'https://ok.example' } });
  // A handler the way a feature contributes one (the inspector's /inspect/ws, behaviour.md §13.1).
  wss = new WebSocketServer({ noServer: true });
  t.c.ctx.upgrades.set('/test/ws', (req, socket, head) => {
    wss?.handleUpgrade(req, socket, head, (ws) => ws.send('hello'));
  });
});
afterAll(async () => {
  wss?.close();
  await t?.close();
});

/** Send a raw upgrade request; resolve with every byte the server sent until it closed the socket. */
function rawUpgrade(headers: Record<string, string>, path = '/test/ws'): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(t.port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => { got += d.toString('latin1'); });
    s.on('close', () => resolve(got));
    s.on('error', reject);
    const lines = [
      `GET ${path} HTTP/1.1`, 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    s.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

/** Status line, headers and body of one raw answer. */
function parse(raw: string) {
  const [head, body] = [raw.slice(0, raw.indexOf('\r\n\r\n')), raw.slice(raw.indexOf('\r\n\r\n') + 4)];
  const [status, ...lines] = head.split('\r\n');
  return { status, headers: new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()])), body };
}

describe('HTTP upgrade hook (behaviour.md §9.2, §13.1)', () => {
  it.each([
    [{ Host: 'evil.example' }, 'Forbidden host: evil.example'],
    [{ Host: `127.0.0.1:1`, Origin: 'http://evil.example' }, 'Forbidden origin: http://evil.example'],
    [{ Host: 'localhost', Origin: 'null' }, 'Forbidden origin: null'],
  ])('when an upgrade comes with %j, then 403 {"error": "%s"} with the CORS headers and the socket closed before any frame', async (headers, error) => {
    const r = parse(await rawUpgrade(headers));
    expect(r.status).toBe('HTTP/1.1 403 Forbidden');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-headers')).toBe('Content-Type, X-Agent-Id');
    expect(r.headers.get('connection')).toBe('close');
    expect(r.headers.has('sec-websocket-accept')).toBe(false);
    // The whole exchange is the JSON body: no 101, no frame after it.
    expect(JSON.parse(r.body)).toEqual({ error });
  });

  it('when a loopback upgrade names a path with no handler, then 404 Not found after the checks', async () => {
    const r = parse(await rawUpgrade({ Host: '127.0.0.1' }, '/no-such/ws?x=1'));
    expect(r.status).toBe('HTTP/1.1 404 Not Found');
    expect(JSON.parse(r.body)).toEqual({ error: 'Not found: GET /no-such/ws' });
  });

  it('when a WebSocket client with a foreign Origin connects, then it gets 403 and never opens', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${t.port}/test/ws`, { headers: { Origin: 'http://evil.example' } });
    const status = await new Promise<number>((resolve, reject) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => reject(new Error('opened')));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(403);
    ws.terminate();
  });

  it('when a loopback or allowed Origin connects to a handled path, then the handler takes the socket', async () => {
    for (const origin of [undefined, 'http://localhost:5173', 'https://ok.example']) {
      const ws = new WebSocket(`ws://127.0.0.1:${t.port}/test/ws`, origin ? { headers: { Origin: origin } } : {});
      const first = await new Promise<string>((resolve, reject) => {
        ws.on('message', (m) => resolve(m.toString()));
        ws.on('error', reject);
      });
      expect(first).toBe('hello');
      ws.close();
    }
  });
});
