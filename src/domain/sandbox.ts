import { LoomError } from './errors.js';

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

/** The message of `ERROR(SANDBOX_UNAVAILABLE)` (behaviour.md §15). */
export const SANDBOX_UNAVAILABLE_MESSAGE = "this kernel has no Landlock; the agent's commands were not run";

/**
 * The message of `ERROR(SANDBOX_UNAVAILABLE)` when a native part the sandbox needs is missing
 * (behaviour.md §17): it names the part, never the kernel.
 */
export function sandboxPartMissingMessage(part: string, reason: string): string {
  return `Loom's native part ${part} is missing (${reason}); the agent's commands were not run`;
}

/**
 * What a confined process may reach (behaviour.md §15): read and write `rw`, read and execute `ro`;
 * device nodes are added by the native side. `abi` caps the Landlock ABI used; `tmp` is the private
 * temp folder, given to the process as TMPDIR.
 */
export interface ConfinePlan {
  rw: string[];
  ro: string[];
  abi: number;
  tmp: string;
}

/** `/describe`'s `sandbox` entry less the daemon default (behaviour.md §15). */
export interface SandboxSupport {
  available: boolean;
  mechanism: 'landlock';
  abi: number;
  /** When not available: the message a `workspace` agent's commands get (a missing part, or the kernel). */
  reason?: string;
}

/** The mode an agent's commands run in: its stored mode, else the daemon default. */
export function effectiveSandbox(stored: SandboxMode | undefined, daemonDefault: SandboxMode): SandboxMode {
  return stored ?? daemonDefault;
}
