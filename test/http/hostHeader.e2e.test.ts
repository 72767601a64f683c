import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';

/**
 * behaviour.md §9.2 (RFC 9112 §3.2) on raw sockets against the built daemon: an HTTP/1.1 request
 * without Host, or with more than one Host header in any order, is 400; HTTP/1.0 without Host is
 * accepted. The same on the Express app, the /exec and /fs fast paths and WebSocket upgrades.
 */
let d: RunningDaemon;
beforeAll(async () => {
  d = await startDaemon();
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo' }) });
});
afterAll(async () => {
  await d?.kill();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

/**
 * Send raw request bytes; resolve with everything the server sent until it closed (or 3 s passed),
 * or, with `statusOnly`, as soon as the status line came (streams and upgrades stay open).
 */
function send(text: string, statusOnly = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(d.port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => { s.destroy(); resolve(got); }, 3000);
    s.on('data', (c) => {
      got += c.toString('latin1');
      if (statusOnly && got.includes('\r\n')) s.destroy();
    });
    s.on('close', () => { clearTimeout(timer); resolve(got); });
    s.on('error', reject);
    s.write(text);
  });
}

const body = JSON.stringify({ cmd: '/info', topic: 'main' });
/** The request line and headers (no Host) of each surface, and its body. */
const SURFACES: Record<string, { head: string[]; body?: string }> = {
  'Express app (GET /health)': { head: ['GET /health'] },
  '/exec fast path': { head: ['POST /exec', 'X-Agent-Id: leo', 'Content-Type: application/json', `Content-Length: ${body.length}`], body },
  '/fs fast path': { head: ['GET /fs/a.txt'] },
  'WebSocket upgrade (/inspect/ws)': { head: ['GET /inspect/ws', 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13'] },
};

function request(surface: string, version: '1.0' | '1.1', hosts: string[]): string {
  const { head, body: b } = SURFACES[surface];
  const [line, ...rest] = head;
  const close = surface.startsWith('WebSocket') ? [] : ['Connection: close'];
  return `${[`${line} HTTP/${version}`, ...hosts.map((h) => `${h}`), ...rest, ...close].join('\r\n')}\r\n\r\n${b ?? ''}`;
}

const statusOf = (raw: string) => raw.slice(0, raw.indexOf('\r\n'));
const bodyOf = (raw: string) => raw.slice(raw.indexOf('\r\n\r\n') + 4);
const port = () => d.port;

describe.each(Object.keys(SURFACES))('%s', (surface) => {
  it.each([
    ['no Host', []],
    ['a loopback Host then a foreign one', ['Host: 127.0.0.1:PORT', 'Host: evil.example']],
    ['a foreign Host then a loopback one', ['Host: evil.example', 'host: 127.0.0.1:PORT']],
    ['the same loopback Host twice', ['Host: localhost', 'HOST: localhost']],
  ])('when an HTTP/1.1 request has %s, then 400 with the reason and the CORS headers', async (what, hosts) => {
    const raw = await send(request(surface, '1.1', hosts.map((h) => h.replace('PORT', String(port())))));
    expect(statusOf(raw)).toBe('HTTP/1.1 400 Bad Request');
    expect(raw).toMatch(/\r\naccess-control-allow-origin: \*\r\n/i);
    expect(raw).not.toMatch(/sec-websocket-accept/i);
    expect(JSON.parse(bodyOf(raw))).toEqual({ error: what === 'no Host' ? 'Bad Request: missing Host header' : 'Bad Request: duplicate Host header' });
  });

  it('when an HTTP/1.0 request has two Host headers, then 400 too', async () => {
    const raw = await send(request(surface, '1.0', ['Host: 127.0.0.1', 'Host: 127.0.0.1']));
    expect(statusOf(raw)).toMatch(/^HTTP\/1\.[01] 400 Bad Request$/);
    expect(JSON.parse(bodyOf(raw))).toEqual({ error: 'Bad Request: duplicate Host header' });
  });

  it('when an HTTP/1.0 request has no Host, or an HTTP/1.1 request has one loopback Host, then it is not refused for it', async () => {
    for (const raw of [await send(request(surface, '1.0', []), true), await send(request(surface, '1.1', [`Host: 127.0.0.1:${port()}`]), true)]) {
      const status = statusOf(raw);
      expect(status).not.toMatch(/ 400 | 403 /);
      // Each surface answers as it does for any request: health 200, /exec 200, /fs 401 (no capability), upgrade 101.
      expect(status).toMatch(surface.startsWith('Express') || surface.startsWith('/exec') ? / 200 OK$/ : surface.startsWith('/fs') ? / 401 / : / 101 /);
    }
  });
});
