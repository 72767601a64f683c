import { LoomError } from './errors.js';
import type { NetworkPolicy } from './networkPolicy.js';

/** behaviour.md §15: an agent's sandbox mode. `none` is the spec's behaviour. */
export type SandboxMode = 'none' | 'workspace';

/** The modes, in the order error texts list them. */
export const SANDBOX_MODES: readonly SandboxMode[] = ['none', 'workspace'];

/** True for a known mode. */
export function isSandboxMode(v: unknown): v is SandboxMode {
  return typeof v === 'string' && (SANDBOX_MODES as readonly string[]).includes(v);
}

/** `sandbox` of a POST /agents body, when given (null counts as omitted, like `home`). */
export function parseSandboxMode(raw: unknown): SandboxMode | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isSandboxMode(raw)) throw new LoomError(400, 'sandbox must be "none" or "workspace"');
  return raw;
}

/** The message of `ERROR(SANDBOX_UNAVAILABLE)` when the kernel has no Landlock (behaviour.md §15). */
export const SANDBOX_UNAVAILABLE_MESSAGE = "this kernel has no Landlock; the agent's commands were not run";

/** behaviour.md §15.1: the four guarantees of a `workspace` agent, in the order `/describe` lists them. */
export type Guarantee = 'files' | 'network' | 'processes' | 'terminals';

/** The guarantees, in order. */
export const GUARANTEES: readonly Guarantee[] = ['files', 'network', 'processes', 'terminals'];

/** A guarantee this system cannot enforce, and why (behaviour.md §15.1). */
export interface MissingGuarantee {
  guarantee: Guarantee;
  reason: string;
}

/** `ERROR(SANDBOX_UNAVAILABLE)`'s message for a missing guarantee (behaviour.md §15.1; `files` keeps §15's wording when the kernel has no Landlock). */
export function missingGuaranteeMessage(m: MissingGuarantee, kernelHasLandlock: boolean): string {
  if (m.guarantee === 'files' && !kernelHasLandlock) return SANDBOX_UNAVAILABLE_MESSAGE;
  return `this system cannot enforce ${m.guarantee} (${m.reason}); the agent's commands were not run`;
}

/** `ERROR(SANDBOX_UNAVAILABLE)`'s message for an agent root that changed since registration (behaviour.md §15.4). */
export function rootChangedMessage(path: string, now: string): string {
  return `rule root ${path} changed (${now}); the agent's commands were not run`;
}

/**
 * What a confined process may reach (behaviour.md §15): read and write `rw` (the agent's own roots,
 * opened without following links), read and execute `ro`; device nodes are added by the native
 * side. `abi` caps the Landlock ABI used; `tmp` is the private temp folder, given as TMPDIR.
 * `tcpPorts`: TCP connects only there (the egress proxy), null when TCP is not confined (`open`);
 * `netns`: an empty network namespace (`none`); `namespaces`: own user, mount and PID namespaces.
 * `home`, `allowedPaths`, `network`: what the agent was granted, for explaining a denial (§15.5).
 */
export interface ConfinePlan {
  rw: string[];
  ro: string[];
  abi: number;
  tmp: string;
  tcpPorts: number[] | null;
  namespaces: boolean;
  netns: boolean;
  home: string;
  allowedPaths: string[];
  network: NetworkPolicy;
  /** The proxy address with the agent's credential, for HTTP_PROXY and the `loom` CLI; null for `none` and `open`. */
  proxyUrl: string | null;
}

/** `/describe`'s `sandbox` entry less the daemon default (behaviour.md §15, §15.1). */
export interface SandboxSupport {
  available: boolean;
  mechanism: 'landlock';
  abi: number;
  guarantees: Record<Guarantee, boolean>;
  missing: MissingGuarantee[];
  /** Where `network` relies on Landlock alone, UDP is not covered. */
  udp: 'open' | 'confined';
}

/** The mode an agent's commands run in: its stored mode, else the daemon default (behaviour.md §15.6). */
export function effectiveSandbox(stored: SandboxMode | undefined, daemonDefault: SandboxMode): SandboxMode {
  return stored ?? daemonDefault;
}

/** The network policy an agent's confined programs get: its stored policy, else `public` (behaviour.md §15.2). */
export function effectiveNetwork(stored: NetworkPolicy | undefined): NetworkPolicy {
  return stored ?? 'public';
}

/** The guarantees a `workspace` agent with this policy needs: all four, less `network` under `open`. */
export function neededGuarantees(network: NetworkPolicy): Guarantee[] {
  return GUARANTEES.filter((g) => g !== 'network' || network !== 'open');
}
