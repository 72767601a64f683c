import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { startEgressProxy } from '../../src/effects/egressProxy.js';
import {
  basic, connectRequest, countingServer, listen, parseRaw, rawExchange, startRig, upstreamStub, viaProxy, type Rig, type Seen,
} from './egressSupport.js';

/** The egress proxy under hostile input: it answers or closes, never crashes, and serves the next request. */

let upstream: ReturnType<typeof upstreamStub>;
let upPort: number;
let daemon: ReturnType<typeof countingServer>;
let rig: Rig;

beforeAll(async () => {
  upstream = upstreamStub();
  upPort = await listen(upstream.server);
  daemon = countingServer();
  rig = await startRig(upPort, await listen(daemon.server));
  rig.policies.set('a', { allow: [`127.0.0.1:${upPort}`] });
});

afterAll(async () => {
  await rig.proxy.close();
  await new Promise<void>((r) => upstream.server.close(() => r()));
  await new Promise<void>((r) => daemon.server.close(() => r()));
});

/** The proxy still forwards an ordinary request. */
async function stillServes(): Promise<void> {
  const r = await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/alive`, { auth: rig.auth('a') });
  expect(r.status).toBe(200);
}

describe('hostile bytes', () => {
  it('malformed request lines get a 400 or a closed socket, and the proxy goes on', async () => {
    const junk = ['GARBAGE\r\n\r\n', 'GET\r\n\r\n', 'CONNECT\r\n\r\n', 'CONNECT  HTTP/1.1\r\n\r\n', 'GET http://a b/ HTTP/1.1\r\n\r\n',
      '\u0000\u0001\u0002\r\n\r\n', 'GET / HTTP/9.9\r\nHost: x\r\n\r\n', 'CONNECT a.test:443 HTTP/1.1\r\nProxy-Authorization: Basic \u0000\r\n\r\n'];
    for (const bytes of junk) {
      const { text } = await rawExchange(rig.proxy.port, bytes);
      if (text !== '') expect(parseRaw(text).status).toBe(400);
    }
    await stillServes();
  });

  it('headers past Node\'s limit get 431; a flood of bad requests at once leaves the proxy serving', async () => {
    // Past Node's 16 KiB header limit but within one socket read: the server then closes with
    // nothing unread, so the client sees the 431 and a FIN rather than a reset that can drop it.
    const huge = `GET http://127.0.0.1:${upPort}/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`;
    expect(parseRaw((await rawExchange(rig.proxy.port, huge)).text).status).toBe(431);
    const flood = Array.from({ length: 50 }, (_, i) => (i % 2 ? connectRequest('x:0') : `GET /${i} HTTP/1.1\r\nConnection: close\r\n\r\n`));
    const answers = await Promise.all(flood.map((bytes) => rawExchange(rig.proxy.port, bytes)));
    expect(answers.map(({ text }) => parseRaw(text).status)).toEqual(Array(50).fill(400));
    await stillServes();
  });

  it('a header named __proto__ is forwarded as a header and pollutes nothing', async () => {
    const req = `GET http://127.0.0.1:${upPort}/p HTTP/1.1\r\nHost: x\r\n__proto__: {"polluted":1}\r\nconstructor: x\r\nProxy-Authorization: ${rig.auth('a')}\r\nConnection: close\r\n\r\n`;
    const r = parseRaw((await rawExchange(rig.proxy.port, req)).text);
    expect(r.status).toBe(200);
    const seen = JSON.parse(r.body) as Seen;
    expect(seen.rawHeaders).toContain('__proto__');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('IPv6 and odd CONNECT targets: refused or rejected, never dialled', async () => {
    const before = rig.dialled.length;
    for (const target of ['[::ffff:127.0.0.1]:1', '[fe80::1%25eth0]:80', '[::]:80', '[]:80', '[[::1]]:80', `${'a'.repeat(300)}:80`]) {
      const { status } = parseRaw((await rawExchange(rig.proxy.port, connectRequest(target, rig.auth('a')))).text);
      expect([400, 403]).toContain(status);
    }
    expect(rig.dialled.length).toBe(before);
    await stillServes();
  });
});

describe('clients and servers that go away', () => {
  it('a client gone while its name resolves leaves nothing open: a tunnel made for it closes with it', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => { release = r; });
    const open = new Set<Socket>();
    const target: TcpServer = createTcpServer((sock) => {
      open.add(sock);
      sock.on('close', () => open.delete(sock));
      sock.resume();
    });
    const targetPort = await listen(target);
    const proxy = await startEgressProxy({
      policyOf: () => 'open', protectedPorts: () => ({ daemon: 1 }), onDaemonRequest: () => undefined, onDenied: () => undefined,
      lookup: async () => { await gate; return [{ address: '127.0.0.1', family: 4 }]; },
    });
    const s = connect(proxy.port, '127.0.0.1');
    await new Promise<void>((r) => s.once('connect', () => r()));
    s.write(connectRequest(`slow.test:${targetPort}`, basic('x', proxy.credential('x'))));
    await new Promise((r) => setTimeout(r, 50));
    s.destroy();
    release();
    for (let i = 0; i < 100 && open.size > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(open.size).toBe(0);
    await proxy.close();
    await new Promise<void>((r) => target.close(() => r()));
  });

  it('a client that leaves mid-download, and an upstream that dies mid-body, cost the proxy nothing', async () => {
    rig.policies.set('o', 'open');
    const s = connect(rig.proxy.port, '127.0.0.1');
    s.write(`GET http://127.0.0.1:${upPort}/big/50000000 HTTP/1.1\r\nHost: x\r\nProxy-Authorization: ${rig.auth('o')}\r\n\r\n`);
    await new Promise<void>((r) => s.once('data', () => r()));
    s.destroy();
    const dying: Server = createServer((req, res) => {
      res.writeHead(200, { 'Content-Length': '1000000' });
      res.write(Buffer.alloc(1000));
      setTimeout(() => res.destroy(), 20);
    });
    const dyingPort = await listen(dying);
    const r = await viaProxy(rig.proxy.port, `http://127.0.0.1:${dyingPort}/`, { auth: rig.auth('o') }).catch((err: Error) => err);
    expect(r instanceof Error ? r.message : `status ${r.status} bytes ${r.bytes}`).not.toBe('status 200 bytes 1000000');
    await new Promise<void>((res) => dying.close(() => res()));
    await stillServes();
  });

  it('close() cuts open tunnels and keep-alive exchanges and resolves', async () => {
    const target = createServer((req, res) => res.end('ok'));
    const targetPort = await listen(target);
    const proxy = await startEgressProxy({
      policyOf: () => 'open', protectedPorts: () => ({ daemon: 1 }), onDaemonRequest: () => undefined, onDenied: () => undefined,
    });
    const { text, socket } = await rawExchange(proxy.port, connectRequest(`127.0.0.1:${targetPort}`, basic('t', proxy.credential('t'))), true);
    expect(text).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    await proxy.close();
    await closed;
    expect(socket.destroyed).toBe(true);
    target.closeAllConnections();
    await new Promise<void>((r) => target.close(() => r()));
  });
});
