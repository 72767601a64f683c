import { Agent, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { handleProxyRequest } from './egressHttp.js';
import { systemLookup } from './egressTarget.js';
import { handleConnect } from './egressTunnel.js';
import type { EgressProxyOptions, ProxyContext } from './egressTypes.js';
import { ProxyCredentials } from './proxyCredentials.js';

export type { EgressProxyOptions, ProxyDenial, ResolvedAddress } from './egressTypes.js';

/** A running egress proxy (behaviour.md §15.2). */
export interface EgressProxy {
  /** The port it listens on, on 127.0.0.1. */
  readonly port: number;
  /** The agent's secret: random, kept for the proxy's lifetime, never valid for another agent. */
  credential(agentId: string): string;
  /** `http://<agent>:<secret>@127.0.0.1:<port>`: what the agent's programs get in HTTP_PROXY and the like. */
  proxyUrl(agentId: string): string;
  /** Stop listening and cut every open exchange and tunnel. */
  close(): Promise<void>;
}

/** A handler's failure ends its exchange; the proxy itself goes on. */
function ending(target: { destroy(): void }) {
  return () => target.destroy();
}

/**
 * Start Loom's egress proxy on 127.0.0.1 at an ephemeral port (behaviour.md §15.2, §15.3): HTTP
 * CONNECT and absolute-form HTTP, a per-agent credential, each target checked against the agent's
 * current policy on the address actually connected to.
 */
export async function startEgressProxy(opts: EgressProxyOptions): Promise<EgressProxy> {
  const creds = new ProxyCredentials();
  const sockets = new Set<Socket>();
  const agent = new Agent({ keepAlive: true });
  let port = 0;
  const ctx: ProxyContext = {
    opts, creds, agent,
    port: () => port,
    lookup: opts.lookup ?? systemLookup,
    dial: opts.dial ?? ((address, p) => ({ host: address, port: p })),
    track: (s) => {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    },
  };
  const server = createServer({ requireHostHeader: false, noDelay: true }, (req: IncomingMessage, res: ServerResponse) => {
    handleProxyRequest(ctx, req, res).catch(ending(res));
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    handleConnect(ctx, req, socket as Socket, head).catch(ending(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Once listening, a server error is an accept that failed (EMFILE): that client sees a reset and
  // the proxy keeps listening; an unheard 'error' would end the daemon it lives in.
  server.on('error', () => undefined);
  port = (server.address() as AddressInfo).port;
  return {
    port,
    credential: (agentId) => creds.secret(agentId),
    proxyUrl: (agentId) => `http://${encodeURIComponent(agentId)}:${creds.secret(agentId)}@127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      agent.destroy();
    }),
  };
}
