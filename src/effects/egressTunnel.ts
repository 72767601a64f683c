import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { parseConnectTarget, type ProxyTarget } from '../domain/proxyTarget.js';
import { admit, judge } from './egressAdmit.js';
import { authAnswer, badRequestAnswer, errorCode, unreachableAnswer, writeRawAnswer } from './egressAnswers.js';
import type { ProxyContext } from './egressTypes.js';

const ESTABLISHED = 'HTTP/1.1 200 Connection Established\r\n\r\n';

/**
 * Join the client to the checked address: a plain socket pipe both ways, Nagle off on both sides, no
 * JavaScript per chunk beyond the pipe. A failed connect is a 502 on the client's socket; after the
 * tunnel is up, an error on either side closes both.
 */
function tunnel(ctx: ProxyContext, client: Socket, head: Buffer, t: ProxyTarget, address: string): void {
  const to = ctx.dial(address, t.port);
  const up = connect({ host: to.host, port: to.port });
  ctx.track(up);
  let open = false;
  up.setNoDelay(true);
  client.setNoDelay(true);
  up.once('connect', () => {
    open = true;
    client.write(ESTABLISHED);
    if (head.length > 0) up.write(head);
    up.pipe(client);
    client.pipe(up);
  });
  up.on('error', (err) => {
    if (open) client.destroy();
    else writeRawAnswer(client, unreachableAnswer(t.host, t.port, errorCode(err)));
  });
  client.on('close', () => up.destroy());
  client.on('error', () => up.destroy());
}

/**
 * `CONNECT host:port` (behaviour.md §15.2): the credential proves the agent, the target is checked
 * (the daemon's port is refused on every local address, whatever the policy) and, when allowed,
 * tunnelled to the checked address.
 */
export async function handleConnect(ctx: ProxyContext, req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
  ctx.track(client);
  client.on('error', () => client.destroy());
  const t = parseConnectTarget(req.url ?? '');
  if (!t) return writeRawAnswer(client, badRequestAnswer(true));
  const who = admit(ctx, req.headers['proxy-authorization']);
  if (!who) return writeRawAnswer(client, authAnswer());
  const decided = await judge(ctx, who, t);
  if ('answer' in decided) return writeRawAnswer(client, decided.answer);
  if (client.destroyed) return;
  tunnel(ctx, client, head, t, decided.address);
}
