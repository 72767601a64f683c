import type { Agent, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { NetworkPolicy } from '../domain/networkPolicy.js';
import type { ProxyCredentials } from './proxyCredentials.js';

/** One connection the egress proxy refused (behaviour.md §15.2, §15.5: the daemon counts it against the running command). */
export interface ProxyDenial {
  agentId: string;
  /** The host as the request named it (normalised, no brackets). */
  host: string;
  port: number;
  /** The short reason also sent as `X-Loom-Denied` (`private address 10.0.0.5`, `not in allow list`). */
  reason: string;
  /** Epoch ms. */
  at: number;
}

/** One answer of a resolver: an address literal and its family. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** What the egress proxy asks of the daemon. */
export interface EgressProxyOptions {
  /** The agent's current policy; undefined for an agent the daemon does not know (its credential is refused, 407). */
  policyOf(agentId: string): NetworkPolicy | undefined;
  /** The daemon's own HTTP port: never reachable through CONNECT or by an allow entry (behaviour.md §15.3). */
  protectedPorts(): { daemon: number };
  /**
   * An absolute-form request addressed to the daemon itself (`http://127.0.0.1:<daemon>/…`,
   * `localhost`, `[::1]`), with `req.url` rewritten to origin-form and hop-by-hop and `Proxy-*`
   * headers removed: the daemon answers it as `agentId` (behaviour.md §15.3).
   */
  onDaemonRequest(agentId: string, req: IncomingMessage, res: ServerResponse): void;
  /** Called once for each refused connection. */
  onDenied(d: ProxyDenial): void;
  /** Resolver of host names (every address); default `dns.promises.lookup` with `all: true`. */
  lookup?: (host: string) => Promise<ResolvedAddress[]>;
  /**
   * Where a checked address is really dialled. Identity unless a test maps a pretend public address
   * to a loopback stub; it is always given the address that was checked, so the check is what a test sees.
   */
  dial?: (address: string, port: number) => { host: string; port: number };
}

/** What the proxy's request and tunnel handlers share. */
export interface ProxyContext {
  opts: EgressProxyOptions;
  creds: ProxyCredentials;
  /** The proxy's own port (known once it listens). */
  port(): number;
  lookup: (host: string) => Promise<ResolvedAddress[]>;
  dial: (address: string, port: number) => { host: string; port: number };
  /** Keep-alive connections to upstream HTTP servers, keyed by the checked address. */
  agent: Agent;
  /** Sockets that left the HTTP server (tunnels): destroyed when the proxy closes. */
  track(socket: Socket): void;
}
