import { landlockAbi, missingSandboxPart } from '../../src/effects/sandbox.js';
import { nativeHelper } from '../../src/effects/shellSpawn.js';

/*
 * Whether this machine can confine an agent (behaviour.md §15, §15.1), asked of the native helper
 * as the daemon loads it (prebuilt or built: src/effects/nativeParts.ts). Free of jest, so the fuzz
 * run (test/fuzz, run by tsx) can ask too.
 */

/** The kernel's Landlock ABI through the native helper (0: no Landlock, or a native part is missing). */
export function kernelLandlockAbi(): number {
  return landlockAbi({});
}

/** Why the sandbox suites skip here, or null when they run. */
export function skipReason(): string | null {
  if (process.platform !== 'linux') return 'not Linux: Landlock is a Linux mechanism';
  const missing = missingSandboxPart();
  if (missing) return `Loom's native part ${missing.part} is missing (${missing.reason})`;
  return kernelLandlockAbi() > 0 ? null : 'this kernel offers no Landlock, so there is nothing to confine with';
}

/**
 * Why a `workspace` agent's commands are refused on this machine (a guarantee of behaviour.md §15.1
 * cannot be enforced: no Landlock, an ABI without TCP rules or scopes, no PID namespaces), or null.
 */
export function guaranteesSkipReason(): string | null {
  const base = skipReason();
  if (base) return base;
  const abi = kernelLandlockAbi();
  if (abi < 6) return `this kernel's Landlock ABI ${abi} lacks TCP rules or scopes (ABI 6, Linux 6.12), so a workspace agent's commands are refused`;
  const problem = nativeHelper()?.probeNamespaces?.() ?? 'the native helper has no namespace probe';
  return problem === '' ? null : `no private PID namespace here (${problem}), so a workspace agent's commands are refused`;
}
