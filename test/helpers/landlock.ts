import { createRequire } from 'node:module';
import { join } from 'node:path';

/*
 * Whether this machine can confine an agent (behaviour.md §15, §15.1), asked of the built native
 * helper. Free of jest, so the fuzz run (test/fuzz, run by tsx) can ask too.
 */

/** The kernel's Landlock ABI through the built helper (0: no Landlock, or the helper is not built). */
export function kernelLandlockAbi(): number {
  try {
    const lib = createRequire(import.meta.url)(join(process.cwd(), 'build', 'Release', 'loom_spawn.node')) as { landlockAbi?: () => number };
    return lib.landlockAbi?.() ?? 0;
  } catch {
    return 0;
  }
}

/** Why the sandbox suites skip here, or null when they run. */
export function skipReason(): string | null {
  if (process.platform !== 'linux') return 'not Linux: Landlock is a Linux mechanism';
  return kernelLandlockAbi() > 0 ? null : 'this kernel offers no Landlock (or the native helper is not built), so there is nothing to confine with';
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
  try {
    const lib = createRequire(import.meta.url)(join(process.cwd(), 'build', 'Release', 'loom_spawn.node')) as { probeNamespaces?: () => string };
    const problem = lib.probeNamespaces?.() ?? 'the native helper has no namespace probe';
    return problem === '' ? null : `no private PID namespace here (${problem}), so a workspace agent's commands are refused`;
  } catch (err) {
    return `the native helper does not load (${(err as Error).message})`;
  }
}
