import { createHash } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import type { NetworkPolicy } from '../../src/domain/networkPolicy.js';
import { startEgressProxy, type EgressProxy, type ProxyDenial, type ResolvedAddress } from '../../src/effects/egressProxy.js';

/**
 * The egress proxy's integration rig: loopback stub servers only. A stub "upstream" echoes what it
 * got; a stub "daemon" counts every connection made to it. Names resolve through a table the test
 * sets; `dial` maps pretend public addresses (documentation-free, really public ones) to the upstream
 * stub and records every address the proxy dialled, so a test sees exactly what was connected to.
 */

/** What the upstream stub saw of one request. */
export interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  rawHeaders: string[];
  bodyBytes: number;
  bodySha: string;
}

/** Listen on an ephemeral loopback port; resolves with the port. */
export async function listen(server: Server | TcpServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

/** An HTTP stub that answers JSON of what it saw; `GET /big/<n>` answers n bytes. */
export function upstreamStub(): { server: Server; seen: Seen[] } {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const hash = createHash('sha256');
    let n = 0;
    req.on('data', (c: Buffer) => { n += c.length; hash.update(c); });
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers }, rawHeaders: req.rawHeaders, bodyBytes: n, bodySha: hash.digest('hex') };
      seen.push(s);
      const big = /^\/big\/(\d+)$/.exec(s.url);
      if (big) {
        res.writeHead(200, { 'Content-Length': big[1], Connection: 'x-upstream-hop', 'X-Upstream-Hop': 'secret', 'Keep-Alive': 'timeout=5' });
        res.end(Buffer.alloc(Number(big[1]), 7));
        return;
      }
      const json = JSON.stringify(s);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json), 'X-Stub': 'upstream' });
      res.end(json);
    });
  });
  return { server, seen };
}

/** A TCP server that counts connections and closes each at once: the daemon's port, which nothing may reach. */
export function countingServer(): { server: TcpServer; count: () => number } {
  let n = 0;
  const server = createTcpServer((s) => { n++; s.destroy(); });
  return { server, count: () => n };
}

/** A complete response read off a raw socket: status line, headers (lower-case names) and body. */
export interface RawResponse {
  status: number;
  statusLine: string;
  headers: Record<string, string>;
  body: string;
}

/** Split a raw HTTP response into status, headers and body. */
export function parseRaw(text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n');
  const head = (end < 0 ? text : text.slice(0, end)).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(head[0].split(' ')[1]), statusLine: head[0], headers, body: end < 0 ? '' : text.slice(end + 4) };
}

/** Send raw bytes to a port and read until the server closes (or `untilBlank`: the end of the first head). */
export function rawExchange(port: number, bytes: string | Buffer, untilBlank = false): Promise<{ text: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => {
      text += c;
      if (untilBlank && text.includes('\r\n\r\n')) resolve({ text, socket });
    });
    socket.on('end', () => resolve({ text, socket }));
    socket.on('close', () => resolve({ text, socket }));
    // A server that answered and then reset the connection: what it sent is the answer.
    socket.on('error', (err) => (text !== '' ? resolve({ text, socket }) : reject(err)));
    socket.write(bytes);
  });
}

/** `Proxy-Authorization` for an id and secret. */
export function basic(agentId: string, secret: string): string {
  return `Basic ${Buffer.from(`${agentId}:${secret}`).toString('base64')}`;
}

/** A CONNECT request's bytes. */
export function connectRequest(target: string, auth?: string): string {
  return `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth ? `Proxy-Authorization: ${auth}\r\n` : ''}\r\n`;
}

/** An absolute-form request through the proxy; resolves with status, headers and body text. */
export function viaProxy(proxyPort: number, url: string, o: { auth?: string; method?: string; headers?: Record<string, string>; body?: Buffer } = {}): Promise<{ status: number; headers: IncomingMessage['headers']; body: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const headers = { ...(o.auth ? { 'Proxy-Authorization': o.auth } : {}), ...o.headers };
    const req = request({ host: '127.0.0.1', port: proxyPort, method: o.method ?? 'GET', path: url, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const all = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: all.length > 65536 ? '' : all.toString('utf8'), bytes: all.length });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/** A proxy under test with its recorders. */
export interface Rig {
  proxy: EgressProxy;
  policies: Map<string, NetworkPolicy>;
  denials: ProxyDenial[];
  dialled: string[];
  lookups: string[];
  names: Map<string, (call: number) => ResolvedAddress[]>;
  daemonCalls: Array<{ agentId: string; url: string; headers: Record<string, unknown>; rawHeaders: string[] }>;
  auth(agentId: string): string;
}

/** Pretend public addresses the dial hook sends to the upstream stub. */
export const PUBLIC_V4 = '93.184.216.34';
export const PUBLIC_V6 = '2606:4700::6810:84e5';

/** Start a proxy whose public addresses reach `upstreamPort` and whose daemon is `daemonPort`. */
export async function startRig(upstreamPort: number, daemonPort: number): Promise<Rig> {
  const policies = new Map<string, NetworkPolicy>();
  const denials: ProxyDenial[] = [];
  const dialled: string[] = [];
  const lookups: string[] = [];
  const names = new Map<string, (call: number) => ResolvedAddress[]>();
  const calls = new Map<string, number>();
  const daemonCalls: Rig['daemonCalls'] = [];
  const proxy = await startEgressProxy({
    policyOf: (id) => policies.get(id),
    protectedPorts: () => ({ daemon: daemonPort }),
    onDaemonRequest: (agentId, req, res) => {
      daemonCalls.push({ agentId, url: req.url ?? '', headers: { ...req.headers }, rawHeaders: [...req.rawHeaders] });
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(`daemon answers ${agentId} ${req.url}\n`);
    },
    onDenied: (d) => denials.push(d),
    lookup: (host) => {
      lookups.push(host);
      const answer = names.get(host);
      const call = (calls.get(host) ?? 0) + 1;
      calls.set(host, call);
      if (!answer) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
      return Promise.resolve(answer(call));
    },
    dial: (address, port) => {
      dialled.push(`${address} ${port}`);
      return address === PUBLIC_V4 || address === PUBLIC_V6 ? { host: '127.0.0.1', port: upstreamPort } : { host: address, port };
    },
  });
  return { proxy, policies, denials, dialled, lookups, names, daemonCalls, auth: (id) => basic(id, proxy.credential(id)) };
}
