import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { isLoopbackOrUnspecified } from '../domain/netAddress.js';
import { parseAbsoluteTarget, type AbsoluteTarget } from '../domain/proxyTarget.js';
import { admit, judge, type Admitted } from './egressAdmit.js';
import { authAnswer, badRequestAnswer, errorCode, unreachableAnswer, writeAnswer } from './egressAnswers.js';
import type { ProxyContext } from './egressTypes.js';

/** Headers meaningful for one connection only (RFC 9110 §7.6.1), never forwarded; `Proxy-*` are the proxy's own. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** True for a header name that stops at the proxy: hop-by-hop, `Proxy-*`, or named in `Connection`. */
function stopsHere(name: string, named: Set<string>): boolean {
  return HOP_BY_HOP.has(name) || name.startsWith('proxy-') || named.has(name);
}

/** The names the `Connection` headers of a message list (they are hop-by-hop too), from its raw headers. */
function connectionNamed(raw: string[]): Set<string> {
  const named = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].toLowerCase() === 'connection') for (const n of raw[i + 1].split(',')) named.add(n.trim().toLowerCase());
  }
  return named;
}

/**
 * The end-to-end headers of a message in raw form (`[name, value, …]`: names as sent, repeats and
 * order kept, any name safe), less those named in `drop`.
 */
export function endToEndHeaders(raw: string[], drop: readonly string[] = []): string[] {
  const named = connectionNamed(raw);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (!stopsHere(name, named) && !drop.includes(name)) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

/** Remove what stops at the proxy from a request in place, `rawHeaders` included (the credential goes no further). */
function stripForDaemon(req: IncomingMessage): void {
  const named = connectionNamed(req.rawHeaders);
  for (const name of Object.keys(req.headers)) if (stopsHere(name, named)) delete req.headers[name];
  req.rawHeaders.splice(0, req.rawHeaders.length, ...endToEndHeaders(req.rawHeaders));
}

/** True for an absolute URL naming the daemon itself: its port on `localhost` or a loopback or unspecified literal. */
function isDaemonTarget(ctx: ProxyContext, t: AbsoluteTarget): boolean {
  return t.port === ctx.opts.protectedPorts().daemon && (t.host === 'localhost' || isLoopbackOrUnspecified(t.host));
}

/** Hand a request for the daemon to it, as origin-form, acting as the agent (behaviour.md §15.3). */
function toDaemon(ctx: ProxyContext, who: Admitted, req: IncomingMessage, res: ServerResponse, t: AbsoluteTarget): void {
  stripForDaemon(req);
  req.url = t.path;
  req.headers.host = t.authority;
  ctx.opts.onDaemonRequest(who.agentId, req, res);
}

/** Forward the exchange to the checked address, streaming both bodies. */
function forward(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse, t: AbsoluteTarget, address: string): void {
  const to = ctx.dial(address, t.port);
  const headers = ['Host', t.authority, ...endToEndHeaders(req.rawHeaders, ['host'])];
  const up = request({ host: to.host, port: to.port, method: req.method, path: t.path, headers, agent: ctx.agent });
  up.on('response', (ur) => {
    res.writeHead(ur.statusCode ?? 502, ur.statusMessage, endToEndHeaders(ur.rawHeaders));
    ur.on('error', () => res.destroy());
    ur.pipe(res);
  });
  up.on('error', (err) => {
    if (res.headersSent) res.destroy();
    else writeAnswer(res, unreachableAnswer(t.host, t.port, errorCode(err)));
  });
  res.on('close', () => {
    if (!res.writableFinished) up.destroy();
  });
  req.pipe(up);
}

/**
 * An HTTP request to the proxy (behaviour.md §15.2): absolute-form only; the credential proves the
 * agent; a URL naming the daemon goes to it as that agent, any other is checked and forwarded.
 */
export async function handleProxyRequest(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const t = parseAbsoluteTarget(req.url ?? '');
  if (!t) return writeAnswer(res, badRequestAnswer(false));
  const who = admit(ctx, req.headers['proxy-authorization']);
  if (!who) return writeAnswer(res, authAnswer());
  if (isDaemonTarget(ctx, t)) return toDaemon(ctx, who, req, res, t);
  const decided = await judge(ctx, who, t);
  if ('answer' in decided) return writeAnswer(res, decided.answer);
  if (res.destroyed) return;
  forward(ctx, req, res, t, decided.address);
}
