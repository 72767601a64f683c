import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { formatHostPort } from '../domain/hostPort.js';
import { describeNetworkPolicy, type NetworkPolicy } from '../domain/networkPolicy.js';

/**
 * The egress proxy's own answers (behaviour.md §15.2): plain text, one line, each starting
 * `loom sandbox:` so an agent can tell the sandbox from the site it wanted.
 */
export interface ProxyAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A header value with anything but printable ASCII replaced (reasons carry checked hosts only; this is the backstop). */
function headerSafe(v: string): string {
  return v.replace(/[^\x20-\x7e]/g, '?');
}

function text(status: number, body: string, headers: Record<string, string> = {}): ProxyAnswer {
  return { status, headers: { 'Content-Type': 'text/plain; charset=utf-8', ...headers }, body: `${body}\n` };
}

/** 403: the policy refused `host:port` (behaviour.md §15.2's body and `X-Loom-Denied`). */
export function deniedAnswer(agentId: string, policy: NetworkPolicy, host: string, port: number, reason: string): ProxyAnswer {
  const body = `loom sandbox: ${formatHostPort(host, port)} is not allowed for agent ${agentId} (network: ${describeNetworkPolicy(policy)})`;
  return text(403, body, { 'X-Loom-Denied': headerSafe(reason) });
}

/** 407: no credential, a wrong one, or one of an agent the daemon no longer knows. */
export function authAnswer(): ProxyAnswer {
  return text(407, 'loom sandbox: proxy authentication required', { 'Proxy-Authenticate': 'Basic realm="loom"' });
}

/** 400: a request the proxy does not take (origin-form, another scheme, a bad CONNECT target). */
export function badRequestAnswer(connect: boolean): ProxyAnswer {
  return text(400, connect
    ? 'loom sandbox: CONNECT takes host:port with a port 1-65535 ([v6]:port for IPv6)'
    : 'loom sandbox: the proxy takes CONNECT host:port or an absolute http:// URL');
}

/** 502: the host name did not resolve. */
export function unresolvedAnswer(host: string, code: string): ProxyAnswer {
  return text(502, `loom sandbox: cannot resolve ${host} (${code})`);
}

/** 502: the checked address did not accept the connection. */
export function unreachableAnswer(host: string, port: number, code: string): ProxyAnswer {
  return text(502, `loom sandbox: cannot connect to ${formatHostPort(host, port)} (${code})`);
}

/** Write an answer on an HTTP exchange. */
export function writeAnswer(res: ServerResponse, a: ProxyAnswer): void {
  res.writeHead(a.status, { ...a.headers, 'Content-Length': String(Buffer.byteLength(a.body)) });
  res.end(a.body);
}

/** Write an answer on a CONNECT socket (no HTTP machinery is left on it) and close it. */
export function writeRawAnswer(socket: Duplex, a: ProxyAnswer): void {
  const head = Object.entries({ ...a.headers, 'Content-Length': String(Buffer.byteLength(a.body)), Connection: 'close' })
    .map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.end(`HTTP/1.1 ${a.status} ${STATUS_CODES[a.status] ?? ''}\r\n${head}\r\n${a.body}`);
}

/** The code of a network error (`ECONNREFUSED`), or its message when it has none. */
export function errorCode(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  return typeof e?.code === 'string' ? e.code : e instanceof Error ? e.message : String(err);
}
