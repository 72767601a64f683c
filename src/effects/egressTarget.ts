import { promises as dns } from 'node:dns';
import { networkInterfaces } from 'node:os';
import { isAddressLiteral, isLoopbackOrUnspecified, sameAddress } from '../domain/netAddress.js';
import { connectRefusal, refusalBeforeLookup, type ConnectGuard, type NetworkPolicy } from '../domain/networkPolicy.js';
import { errorCode } from './egressAnswers.js';
import type { ResolvedAddress } from './egressTypes.js';

/** What the proxy does with one target: connect to exactly `address`, refuse, or report a failed lookup. */
export type Verdict =
  | { kind: 'connect'; address: string }
  | { kind: 'denied'; reason: string }
  | { kind: 'unresolved'; code: string };

/** The default resolver: every address of a name, in the resolver's order. */
export async function systemLookup(host: string): Promise<ResolvedAddress[]> {
  const found = await dns.lookup(host, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/**
 * True for an address of this machine: loopback, unspecified, or one of its interfaces' addresses
 * (a daemon listening on every interface is reached on those too). Asked only for the protected ports.
 */
export function isLocalAddress(address: string): boolean {
  if (isLoopbackOrUnspecified(address)) return true;
  return Object.values(networkInterfaces()).some((list) => (list ?? []).some((i) => sameAddress(i.address, address)));
}

/** The guard of a proxy listening on `proxyPort` for a daemon on `daemonPort`. */
export function connectGuard(daemonPort: number, proxyPort: number): ConnectGuard {
  return { daemonPort, proxyPort, isLocal: isLocalAddress };
}

/**
 * Decide where `host:port` may be connected under `policy` (behaviour.md §15.2). A host the policy
 * refuses by name is not looked up; a name is resolved once and every address it gave is checked in
 * order: the first one the policy accepts is the one connected to, as that literal, so nothing
 * resolves the name again between the check and the connect. When none is accepted, the first
 * address's reason is the refusal.
 */
export async function decideTarget(
  policy: NetworkPolicy, host: string, port: number, guard: ConnectGuard, lookup: (host: string) => Promise<ResolvedAddress[]>,
): Promise<Verdict> {
  const early = refusalBeforeLookup(policy, host, port);
  if (early !== null) return { kind: 'denied', reason: early };
  let addresses: string[];
  if (isAddressLiteral(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host)).map((a) => a.address);
    } catch (err) {
      return { kind: 'unresolved', code: errorCode(err) };
    }
    if (addresses.length === 0) return { kind: 'unresolved', code: 'no address' };
  }
  let first: string | null = null;
  for (const address of addresses) {
    const reason = isAddressLiteral(address) ? connectRefusal(policy, host, port, address, guard) : `not an address ${address}`;
    if (reason === null) return { kind: 'connect', address };
    first ??= reason;
  }
  return { kind: 'denied', reason: first ?? 'no address' };
}
