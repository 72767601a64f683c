import { ALLOW_ENTRIES_MAX, matchAllowEntry, parseAllowEntry, type AllowEntry } from './allowEntry.js';
import { LoomError } from './errors.js';
import { isMetadataAddress, publicRefusal } from './netAddress.js';

/**
 * behaviour.md §15.2: what a confined agent's programs may connect to through the egress proxy.
 * `public`: any host whose resolved address is public unicast; `none`: nothing; `open`: anything
 * (the spec's behaviour, chosen explicitly); `allow`: the listed hosts, suffixes and addresses.
 */
export type NetworkPolicy = 'public' | 'none' | 'open' | { allow: string[] };

/** The 400 of a `network` field that is none of the four forms. */
export const NETWORK_POLICY_ERROR = 'network must be "public", "none", "open" or {"allow": [hosts]}';
/** The error of a `--network` flag that is none of its forms. */
export const NETWORK_FLAG_ERROR = '--network must be public, none, open or allow=host,host:port,...';

const NAMED = ['public', 'none', 'open'] as const;

/** Parsed entries of each allow policy seen, so a check never parses a list twice. */
const parsedEntries = new WeakMap<object, AllowEntry[]>();

function entryError(error: string, text: string, problem: string): LoomError {
  const shown = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return new LoomError(400, error, { message: `allow entry ${JSON.stringify(shown)} ${problem}` });
}

/** An allow policy of fresh, checked entries (count bounded, each a valid entry); throws `error`. */
function allowPolicy(entries: unknown[], error: string): { allow: string[] } {
  if (entries.length === 0) throw new LoomError(400, error, { message: 'allow lists no host; "none" refuses everything' });
  if (entries.length > ALLOW_ENTRIES_MAX) throw new LoomError(400, error, { message: `allow lists at most ${ALLOW_ENTRIES_MAX} entries` });
  const parsed: AllowEntry[] = [];
  for (const e of entries) {
    if (typeof e !== 'string') throw new LoomError(400, error, { message: 'allow entries must be strings' });
    const entry = parseAllowEntry(e);
    if (typeof entry === 'string') throw entryError(error, e, entry);
    parsed.push(entry);
  }
  const policy = { allow: entries as string[] };
  parsedEntries.set(policy, parsed);
  return policy;
}

/**
 * The `network` field of a POST /agents body (behaviour.md §15.2); undefined or null = omitted (the
 * stored policy is kept). An object must have exactly one own key, `allow`, holding an array: any
 * other key (`__proto__`, `constructor` included) is a 400, and nothing is read through a prototype.
 */
export function parseNetworkPolicy(raw: unknown): NetworkPolicy | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string' && (NAMED as readonly string[]).includes(raw)) return raw as NetworkPolicy;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new LoomError(400, NETWORK_POLICY_ERROR);
  const keys = Reflect.ownKeys(raw);
  if (keys.length !== 1 || keys[0] !== 'allow') throw new LoomError(400, NETWORK_POLICY_ERROR);
  const list = Object.getOwnPropertyDescriptor(raw, 'allow')?.value as unknown;
  if (!Array.isArray(list)) throw new LoomError(400, NETWORK_POLICY_ERROR);
  if (list.length > ALLOW_ENTRIES_MAX) throw new LoomError(400, NETWORK_POLICY_ERROR, { message: `allow lists at most ${ALLOW_ENTRIES_MAX} entries` });
  return allowPolicy(Array.from(list as unknown[]), NETWORK_POLICY_ERROR);
}

/** The CLI's `--network public|none|open|allow=host,host:port` (behaviour.md §15.2). */
export function parseNetworkFlag(text: string): NetworkPolicy {
  if ((NAMED as readonly string[]).includes(text)) return text as NetworkPolicy;
  if (!text.startsWith('allow=')) throw new LoomError(400, NETWORK_FLAG_ERROR);
  const entries = text.slice('allow='.length).split(',').map((e) => e.trim());
  if (entries.length === 1 && entries[0] === '') return allowPolicy([], NETWORK_FLAG_ERROR);
  return allowPolicy(entries, NETWORK_FLAG_ERROR);
}

/** The policy as messages show it: `public`, `none`, `open`, `allow a.com, *.b.org, 127.0.0.1:8080`. */
export function describeNetworkPolicy(p: NetworkPolicy): string {
  return typeof p === 'string' ? p : `allow ${p.allow.join(', ')}`;
}

/** The parsed entries of an allow policy (entries that do not parse allow nothing). */
export function allowEntriesOf(p: { allow: string[] }): AllowEntry[] {
  let parsed = parsedEntries.get(p);
  if (!parsed) {
    parsed = p.allow.map(parseAllowEntry).filter((e): e is AllowEntry => typeof e !== 'string');
    parsedEntries.set(p, parsed);
  }
  return parsed;
}

/**
 * Why the policy refuses `host:port` before anything is resolved, or null when it may go on to be
 * resolved and checked address by address: `none` refuses all, `allow` every host no entry names.
 * A host outside an allow list is never even looked up, so DNS carries nothing out.
 */
export function refusalBeforeLookup(p: NetworkPolicy, host: string, port: number): string | null {
  if (p === 'none') return 'network none';
  if (typeof p === 'string') return null;
  return allowedByPolicy(p, host, port) ? null : 'not in allow list';
}

/** Whether an allow policy names `host` (normalised, no brackets) on `port`. */
export function allowedByPolicy(p: { allow: string[] }, host: string, port: number): boolean {
  return allowEntriesOf(p).some((e) => matchAllowEntry(e, host, port));
}

/** What the proxy knows of this machine when it checks an address. */
export interface ConnectGuard {
  /** The daemon's own HTTP port: never reached on a local address, whatever the policy. */
  daemonPort: number;
  /** The proxy's own port: never a target either (a request to itself loops). */
  proxyPort: number;
  /** True when an address is this machine's (loopback, unspecified, one of its interfaces). */
  isLocal(address: string): boolean;
}

/**
 * Why connecting to `address` (a literal the resolver gave for `host`) on `port` is refused, or null
 * when the connection may be made to exactly that address. The daemon's and the proxy's ports on a
 * local address are refused under every policy; `public` wants public unicast; an allow list that
 * named the host by name never reaches a cloud metadata address through it (only a literal entry may).
 */
export function connectRefusal(p: NetworkPolicy, host: string, port: number, address: string, guard: ConnectGuard): string | null {
  const before = refusalBeforeLookup(p, host, port);
  if (before !== null) return before;
  if ((port === guard.daemonPort || port === guard.proxyPort) && guard.isLocal(address)) return port === guard.daemonPort ? 'daemon port' : 'proxy port';
  if (p === 'public') return publicRefusal(address);
  if (typeof p === 'string') return null;
  const literal = allowEntriesOf(p).some((e) => e.kind === 'address' && matchAllowEntry(e, address, port));
  return !literal && isMetadataAddress(address) ? `metadata address ${address}` : null;
}
