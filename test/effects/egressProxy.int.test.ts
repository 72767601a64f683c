import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Server as TcpServer } from 'node:net';
import {
  basic, connectRequest, countingServer, listen, parseRaw, PUBLIC_V4, PUBLIC_V6, rawExchange, startRig, upstreamStub, viaProxy,
  type Rig, type Seen,
} from './egressSupport.js';

/** The egress proxy (behaviour.md §15.2, §15.3) against loopback stubs: every answer checked exactly. */

let upstream: { server: Server; seen: Seen[] };
let upPort: number;
let daemon: { server: TcpServer; count: () => number };
let daemonPort: number;
let closedPort: number;
let rig: Rig;

beforeAll(async () => {
  upstream = upstreamStub();
  upPort = await listen(upstream.server);
  daemon = countingServer();
  daemonPort = await listen(daemon.server);
  const gone = countingServer();
  closedPort = await listen(gone.server);
  await new Promise<void>((r) => gone.server.close(() => r()));
  rig = await startRig(upPort, daemonPort);
});

afterAll(async () => {
  await rig.proxy.close();
  await new Promise<void>((r) => upstream.server.close(() => r()));
  await new Promise<void>((r) => daemon.server.close(() => r()));
});

beforeEach(() => {
  rig.policies.clear();
  rig.denials.length = 0;
  rig.dialled.length = 0;
  rig.lookups.length = 0;
  rig.names.clear();
  rig.daemonCalls.length = 0;
  upstream.seen.length = 0;
});

/** CONNECT, then one HTTP/1.1 GET through the tunnel; the proxy's answer and the tunnelled one. */
async function tunnelGet(target: string, auth: string, path = '/t'): Promise<{ proxy: string; inner: string }> {
  const { text, socket } = await rawExchange(rig.proxy.port, connectRequest(target, auth), true);
  const inner = await new Promise<string>((resolve) => {
    let out = '';
    socket.removeAllListeners('data');
    socket.on('data', (c: string) => { out += c; });
    socket.on('close', () => resolve(out));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${target}\r\nConnection: close\r\n\r\n`);
  });
  return { proxy: text, inner };
}

const denied = (host: string, id: string, policy: string) => `loom sandbox: ${host} is not allowed for agent ${id} (network: ${policy})\n`;

describe('allowed traffic', () => {
  it('absolute-form: forwarded as origin-form with the URL Host; Proxy-* and hop-by-hop headers stop at the proxy', async () => {
    rig.policies.set('a', { allow: [`127.0.0.1:${upPort}`] });
    const r = await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/x/y?q=1#frag`, {
      auth: rig.auth('a'), headers: { 'Proxy-Connection': 'keep-alive', Connection: 'x-private', 'X-Private': 'p', 'X-Keep': 'k', Host: 'wrong.example' },
    });
    expect(r.status).toBe(200);
    expect(r.headers['x-stub']).toBe('upstream');
    const seen = JSON.parse(r.body) as Seen;
    expect(seen.url).toBe('/x/y?q=1');
    expect(seen.headers.host).toBe(`127.0.0.1:${upPort}`);
    expect(seen.headers['x-keep']).toBe('k');
    const names = seen.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    for (const gone of ['proxy-authorization', 'proxy-connection', 'x-private']) expect(names).not.toContain(gone);
    expect(rig.dialled).toEqual([`127.0.0.1 ${upPort}`]);
    expect(rig.denials).toEqual([]);
  });

  it('absolute-form streams bodies both ways and strips the upstream hop-by-hop headers', async () => {
    rig.policies.set('a', 'open');
    const body = randomBytes(3 * 1024 * 1024 + 17);
    const post = await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/upload`, { auth: rig.auth('a'), method: 'POST', body });
    const seen = JSON.parse(post.body) as Seen;
    expect(seen.bodyBytes).toBe(body.length);
    expect(seen.bodySha).toBe(createHash('sha256').update(body).digest('hex'));
    const big = await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/big/5000000`, { auth: rig.auth('a') });
    expect(big.bytes).toBe(5000000);
    expect(big.headers['x-upstream-hop']).toBeUndefined();
    expect(big.headers['content-length']).toBe('5000000');
  });

  it('CONNECT: 200 Connection Established, then a plain tunnel (bytes sent with the CONNECT pass too)', async () => {
    rig.policies.set('a', { allow: [`127.0.0.1:${upPort}`] });
    const { proxy, inner } = await tunnelGet(`127.0.0.1:${upPort}`, rig.auth('a'), '/through');
    expect(proxy).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    expect(parseRaw(inner).status).toBe(200);
    expect((JSON.parse(parseRaw(inner).body) as Seen).url).toBe('/through');
    const early = `GET /early HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
    const { text } = await rawExchange(rig.proxy.port, connectRequest(`127.0.0.1:${upPort}`, rig.auth('a')) + early);
    expect(text.startsWith('HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK')).toBe(true);
    expect(text).toContain('"url":"/early"');
  });

  it('public: a name whose resolved address is public is connected at that address (v4 and v6)', async () => {
    rig.policies.set('a', 'public');
    rig.names.set('public.test', () => [{ address: PUBLIC_V4, family: 4 }]);
    rig.names.set('v6.test', () => [{ address: PUBLIC_V6, family: 6 }]);
    const r = await viaProxy(rig.proxy.port, 'http://public.test/p', { auth: rig.auth('a') });
    expect(r.status).toBe(200);
    expect((JSON.parse(r.body) as Seen).headers.host).toBe('public.test');
    const t = await tunnelGet('v6.test:443', rig.auth('a'));
    expect(t.proxy).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    expect(rig.dialled).toEqual([`${PUBLIC_V4} 80`, `${PUBLIC_V6} 443`]);
  });

  it('open reaches a loopback server; a policy change applies to the next request', async () => {
    rig.policies.set('a', 'open');
    expect((await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/`, { auth: rig.auth('a') })).status).toBe(200);
    rig.policies.set('a', 'none');
    expect((await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/`, { auth: rig.auth('a') })).status).toBe(403);
  });
});

describe('403: refused targets, with X-Loom-Denied and the body of behaviour.md §15.2', () => {
  it('public refuses a loopback literal (absolute-form and CONNECT) and tells the daemon once per refusal', async () => {
    rig.policies.set('a', 'public');
    const r = await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/`, { auth: rig.auth('a') });
    expect(r.status).toBe(403);
    expect(r.headers['x-loom-denied']).toBe('loopback address 127.0.0.1');
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.body).toBe(denied(`127.0.0.1:${upPort}`, 'a', 'public'));
    const c = parseRaw((await rawExchange(rig.proxy.port, connectRequest('[::1]:8080', rig.auth('a')))).text);
    expect(c.statusLine).toBe('HTTP/1.1 403 Forbidden');
    expect(c.headers['x-loom-denied']).toBe('loopback address ::1');
    expect(c.body).toBe(denied('[::1]:8080', 'a', 'public'));
    expect(rig.denials.map(({ at, ...d }) => d)).toEqual([
      { agentId: 'a', host: '127.0.0.1', port: upPort, reason: 'loopback address 127.0.0.1' },
      { agentId: 'a', host: '::1', port: 8080, reason: 'loopback address ::1' },
    ]);
    expect(Math.abs(rig.denials[0].at - Date.now())).toBeLessThan(60000);
    expect(rig.dialled).toEqual([]);
  });

  it('public refuses a name that resolves only to private, link-local, CGNAT or metadata addresses', async () => {
    rig.policies.set('a', 'public');
    const cases: Array<[string, string]> = [['10.0.0.5', 'private'], ['fd00::5', 'private'], ['169.254.9.9', 'link-local'],
      ['100.64.1.1', 'CGNAT'], ['169.254.169.254', 'metadata'], ['::ffff:192.168.0.1', 'private'], ['0.0.0.0', 'unspecified']];
    for (const [address, word] of cases) {
      rig.names.set('inside.test', () => [{ address, family: address.includes(':') ? 6 : 4 }]);
      const r = await viaProxy(rig.proxy.port, 'http://inside.test/', { auth: rig.auth('a') });
      expect([r.status, r.headers['x-loom-denied'], r.body]).toEqual([403, `${word} address ${address}`, denied('inside.test:80', 'a', 'public')]);
    }
    expect(rig.dialled).toEqual([]);
  });

  it('DNS rebinding: of a public and a private answer only the public address is dialled; a later private answer is refused', async () => {
    rig.policies.set('a', 'public');
    rig.names.set('mixed.test', () => [{ address: '10.0.0.5', family: 4 }, { address: PUBLIC_V4, family: 4 }]);
    expect((await viaProxy(rig.proxy.port, 'http://mixed.test/', { auth: rig.auth('a') })).status).toBe(200);
    rig.names.set('rebind.test', (call) => [{ address: call === 1 ? PUBLIC_V4 : '127.0.0.1', family: 4 }]);
    expect((await tunnelGet(`rebind.test:${upPort}`, rig.auth('a'))).proxy).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    const second = parseRaw((await rawExchange(rig.proxy.port, connectRequest(`rebind.test:${upPort}`, rig.auth('a')))).text);
    expect([second.status, second.headers['x-loom-denied']]).toEqual([403, 'loopback address 127.0.0.1']);
    expect(rig.dialled).toEqual([`${PUBLIC_V4} 80`, `${PUBLIC_V4} ${upPort}`]);
    expect(rig.lookups).toEqual(['mixed.test', 'rebind.test', 'rebind.test']);
  });

  it('none refuses everything and looks nothing up', async () => {
    rig.policies.set('n', 'none');
    const r = await viaProxy(rig.proxy.port, 'http://public.test/', { auth: rig.auth('n') });
    expect([r.status, r.headers['x-loom-denied'], r.body]).toEqual([403, 'network none', denied('public.test:80', 'n', 'none')]);
    const c = parseRaw((await rawExchange(rig.proxy.port, connectRequest('1.1.1.1:443', rig.auth('n')))).text);
    expect([c.status, c.headers['x-loom-denied'], c.body]).toEqual([403, 'network none', denied('1.1.1.1:443', 'n', 'none')]);
    expect(rig.lookups).toEqual([]);
  });

  it('allow: a host outside the list is refused without a lookup; ports and suffixes count', async () => {
    const policy = { allow: ['*.good.test:443', `127.0.0.1:${upPort}`] };
    rig.policies.set('a', policy);
    rig.names.set('api.good.test', () => [{ address: PUBLIC_V4, family: 4 }]);
    const desc = `allow *.good.test:443, 127.0.0.1:${upPort}`;
    for (const target of ['evil.test:443', 'good.test:443', 'api.good.test:80', `127.0.0.2:${upPort}`, `localhost:${upPort}`]) {
      const c = parseRaw((await rawExchange(rig.proxy.port, connectRequest(target, rig.auth('a')))).text);
      expect([c.status, c.headers['x-loom-denied'], c.body]).toEqual([403, 'not in allow list', denied(target, 'a', desc)]);
    }
    expect(rig.lookups).toEqual([]);
    expect((await tunnelGet('api.good.test:443', rig.auth('a'))).proxy).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    expect(rig.denials.map((d) => d.reason)).toEqual(Array(5).fill('not in allow list'));
  });
});

describe("the daemon's port (behaviour.md §15.3)", () => {
  it('CONNECT to it is refused under open and through an allow entry naming it, on every local spelling', async () => {
    rig.policies.set('o', 'open');
    rig.policies.set('a', { allow: [`127.0.0.1:${daemonPort}`, 'localhost', '[::1]'] });
    rig.names.set('localhost', () => [{ address: '127.0.0.1', family: 4 }]);
    rig.names.set('sneaky.test', () => [{ address: '127.0.0.1', family: 4 }]);
    const targets: Array<[string, string]> = [['o', `127.0.0.1:${daemonPort}`], ['o', `localhost:${daemonPort}`], ['o', `[::1]:${daemonPort}`],
      ['o', `0.0.0.0:${daemonPort}`], ['o', `sneaky.test:${daemonPort}`], ['a', `127.0.0.1:${daemonPort}`], ['a', `localhost:${daemonPort}`], ['a', `[::ffff:127.0.0.1]:${daemonPort}`]];
    for (const [id, target] of targets) {
      const c = parseRaw((await rawExchange(rig.proxy.port, connectRequest(target, rig.auth(id)))).text);
      expect([target, c.status, c.headers['x-loom-denied']]).toEqual([target, 403, 'daemon port']);
    }
    expect(daemon.count()).toBe(0);
    expect(rig.dialled).toEqual([]);
  });

  it("the proxy's own port is refused too", async () => {
    rig.policies.set('o', 'open');
    const c = parseRaw((await rawExchange(rig.proxy.port, connectRequest(`127.0.0.1:${rig.proxy.port}`, rig.auth('o')))).text);
    expect([c.status, c.headers['x-loom-denied']]).toEqual([403, 'proxy port']);
    const r = await viaProxy(rig.proxy.port, `http://127.0.0.1:${rig.proxy.port}/`, { auth: rig.auth('o') });
    expect([r.status, r.headers['x-loom-denied']]).toEqual([403, 'proxy port']);
  });

  it('absolute-form addressed to the daemon reaches onDaemonRequest as the agent, origin-form, without the credential', async () => {
    rig.policies.set('a', 'public');
    for (const host of [`127.0.0.1:${daemonPort}`, `localhost:${daemonPort}`, `[::1]:${daemonPort}`]) {
      const r = await viaProxy(rig.proxy.port, `http://${host}/exec?topic=main`, { auth: rig.auth('a'), method: 'POST', headers: { 'Proxy-Connection': 'keep-alive', 'X-Agent-Id': 'a' }, body: Buffer.from('{}') });
      expect([r.status, r.body]).toEqual([200, 'daemon answers a /exec?topic=main\n']);
    }
    expect(rig.daemonCalls.map((c) => [c.agentId, c.url, c.headers.host])).toEqual([
      ['a', '/exec?topic=main', `127.0.0.1:${daemonPort}`], ['a', '/exec?topic=main', `localhost:${daemonPort}`], ['a', '/exec?topic=main', `[::1]:${daemonPort}`],
    ]);
    for (const c of rig.daemonCalls) {
      expect(Object.keys(c.headers).filter((h) => h.startsWith('proxy-'))).toEqual([]);
      expect(c.rawHeaders.join('\n')).not.toContain(rig.proxy.credential('a'));
      expect(c.headers['x-agent-id']).toBe('a');
    }
    expect(daemon.count()).toBe(0);
  });
});

describe('407: the per-agent credential', () => {
  const AUTH_BODY = 'loom sandbox: proxy authentication required\n';

  it('missing, wrong or malformed credentials get 407 with Proxy-Authenticate, on both forms', async () => {
    rig.policies.set('a', 'open');
    rig.policies.set('__proto__', 'open');
    const secret = rig.proxy.credential('a');
    const bad = [undefined, basic('a', 'wrong'), basic('a', `${secret}x`), basic('a', secret.slice(1)), `Bearer ${secret}`, 'Basic', 'Basic !!!!',
      `Basic ${Buffer.from(`a${secret}`).toString('base64')}`, `Basic ${Buffer.from(`:${secret}`).toString('base64')}`,
      basic('__proto__', 'x'), basic('constructor', secret), `Basic ${'A'.repeat(5000)}`, `Basic ${Buffer.from('a:').toString('base64')}`];
    for (const auth of bad) {
      const r = await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/`, { auth });
      expect([r.status, r.headers['proxy-authenticate'], r.body]).toEqual([407, 'Basic realm="loom"', AUTH_BODY]);
      const c = parseRaw((await rawExchange(rig.proxy.port, connectRequest(`127.0.0.1:${upPort}`, auth))).text);
      expect([c.statusLine, c.headers['proxy-authenticate'], c.body]).toEqual(['HTTP/1.1 407 Proxy Authentication Required', 'Basic realm="loom"', AUTH_BODY]);
    }
    expect(upstream.seen).toEqual([]);
    expect(rig.denials).toEqual([]);
  });

  it("one agent's credential never works as another's; an agent the daemon no longer knows is refused", async () => {
    rig.policies.set('a', 'open');
    rig.policies.set('b', 'open');
    const sa = rig.proxy.credential('a');
    expect(rig.proxy.credential('a')).toBe(sa);
    expect(rig.proxy.credential('b')).not.toBe(sa);
    expect(rig.proxy.proxyUrl('a')).toBe(`http://a:${sa}@127.0.0.1:${rig.proxy.port}`);
    expect((await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/`, { auth: basic('b', sa) })).status).toBe(407);
    expect((await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/`, { auth: basic('a', sa) })).status).toBe(200);
    rig.policies.delete('a');
    expect((await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/`, { auth: basic('a', sa) })).status).toBe(407);
    // The agent id is the one its own credential proves: a denial names it, not a header it sent.
    rig.policies.set('b', 'none');
    const r = await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/`, { auth: rig.auth('b'), headers: { 'X-Agent-Id': 'a' } });
    expect(r.body).toBe(denied(`127.0.0.1:${upPort}`, 'b', 'none'));
  });

  it('the proxy URL carries an encoded id; __proto__ is an id like any other', async () => {
    rig.policies.set('__proto__', { allow: [`127.0.0.1:${upPort}`] });
    const url = new URL(rig.proxy.proxyUrl('__proto__'));
    expect(decodeURIComponent(url.username)).toBe('__proto__');
    const r = await viaProxy(rig.proxy.port, `http://127.0.0.1:${upPort}/`, { auth: basic('__proto__', decodeURIComponent(url.password)) });
    expect(r.status).toBe(200);
  });
});

describe('400 and 502', () => {
  it('origin-form and other schemes get 400; a CONNECT target without a usable port too', async () => {
    const ORIGIN = 'loom sandbox: the proxy takes CONNECT host:port or an absolute http:// URL\n';
    for (const path of ['/', '/exec', 'https://a.test/', `http://user:pw@127.0.0.1:${upPort}/`]) {
      const r = await viaProxy(rig.proxy.port, path, { auth: rig.auth('a') });
      expect([r.status, r.body]).toEqual([400, ORIGIN]);
    }
    rig.policies.set('a', 'open');
    const BAD = 'loom sandbox: CONNECT takes host:port with a port 1-65535 ([v6]:port for IPv6)\n';
    for (const target of ['a.test', 'a.test:0', 'a.test:99999', '::1:443', '[::1]', 'a%20b:80', '[1.2.3.4]:80']) {
      const c = parseRaw((await rawExchange(rig.proxy.port, connectRequest(target, rig.auth('a')))).text);
      expect([target, c.statusLine, c.body]).toEqual([target, 'HTTP/1.1 400 Bad Request', BAD]);
    }
  });

  it('a name that does not resolve is a 502 naming it; a refused connection is a 502 naming the target', async () => {
    rig.policies.set('o', 'open');
    const r = await viaProxy(rig.proxy.port, 'http://nowhere.test/', { auth: rig.auth('o') });
    expect([r.status, r.body]).toEqual([502, 'loom sandbox: cannot resolve nowhere.test (ENOTFOUND)\n']);
    const c = parseRaw((await rawExchange(rig.proxy.port, connectRequest('nowhere.test:443', rig.auth('o')))).text);
    expect([c.statusLine, c.body]).toEqual(['HTTP/1.1 502 Bad Gateway', 'loom sandbox: cannot resolve nowhere.test (ENOTFOUND)\n']);
    const down = await viaProxy(rig.proxy.port, `http://127.0.0.1:${closedPort}/`, { auth: rig.auth('o') });
    expect([down.status, down.body]).toEqual([502, `loom sandbox: cannot connect to 127.0.0.1:${closedPort} (ECONNREFUSED)\n`]);
    const t = parseRaw((await rawExchange(rig.proxy.port, connectRequest(`127.0.0.1:${closedPort}`, rig.auth('o')))).text);
    expect([t.statusLine, t.body]).toEqual(['HTTP/1.1 502 Bad Gateway', `loom sandbox: cannot connect to 127.0.0.1:${closedPort} (ECONNREFUSED)\n`]);
    expect(rig.denials).toEqual([]);
  });
});
