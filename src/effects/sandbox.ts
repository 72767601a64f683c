import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { basename, dirname, join } from 'node:path';
import type { ConfinePlan, SandboxSupport } from '../domain/sandbox.js';
import { nativeHelper } from './shellSpawn.js';

/**
 * The kernel side of the agent sandbox (behaviour.md §15, docs/sandbox.md): which Landlock ABI
 * this machine offers, where the shells' exec wrapper is, and the plan of one agent's confinement.
 * The rules themselves are built and applied natively (native/confine.h).
 */

/** The system trees every confined program may read and execute. */
const SYSTEM_READ = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/proc', '/sys'];

/** The exec wrapper of confined shells, built beside the native spawn helper. */
const WRAPPER = fileURLToPath(new URL('../../build/Release/loom_sandbox', import.meta.url));

let kernelAbiCache: number | undefined;

/** The kernel's ABI, asked once (it cannot change while the daemon runs); 0 without the helpers. */
function kernelAbi(): number {
  if (kernelAbiCache === undefined) {
    const lib = nativeHelper();
    kernelAbiCache = lib?.landlockAbi && existsSync(WRAPPER) ? lib.landlockAbi() : 0;
  }
  return kernelAbiCache;
}

/**
 * The Landlock ABI used: the kernel's (through the native helper), capped by LOOM_SANDBOX_ABI_MAX
 * (0 simulates a kernel without Landlock; tests use it to check the fail-closed path). 0 when the
 * native helper or the wrapper is not built.
 */
export function landlockAbi(env: NodeJS.ProcessEnv = process.env): number {
  const kernel = kernelAbi();
  const raw = env.LOOM_SANDBOX_ABI_MAX;
  const cap = raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : Number.POSITIVE_INFINITY;
  return Math.max(0, Math.min(kernel, cap));
}

/**
 * Hide the daemon's environment (its tokens) from /proc/<pid>/environ: Landlock does not guard that
 * file on every kernel, so a confined command could otherwise read it (docs/sandbox.md). The
 * environment itself is unchanged for the daemon.
 */
export function scrubDaemonEnvironment(): void {
  nativeHelper()?.scrubEnviron?.();
}

/** `/describe`'s `sandbox` entry, less the daemon default (behaviour.md §15). */
export function sandboxSupport(): SandboxSupport {
  const abi = landlockAbi();
  return { available: abi > 0, mechanism: 'landlock', abi };
}

/** The install prefix of the running node (`/usr/local` for `/usr/local/bin/node`), so npm and its modules are readable. */
function nodeFolder(): string {
  const bin = dirname(process.execPath);
  return basename(bin) === 'bin' ? dirname(bin) : bin;
}

/** Where an agent's private temp folder is: `<data>/<stateRoot>/<id>/tmp`. */
export function agentTempFolder(dataDir: string, stateRoot: string, agentId: string): string {
  return join(dataDir, stateRoot, agentId, 'tmp');
}

/**
 * The confinement of one agent's programs, or null when this machine cannot confine (the caller
 * refuses to run anything). Creates the private temp folder.
 */
export function confinePlan(a: { dataDir: string; stateRoot: string; agentId: string; home: string; allowedPaths: readonly string[] }, env: NodeJS.ProcessEnv = process.env): ConfinePlan | null {
  const abi = landlockAbi(env);
  if (abi === 0) return null;
  const tmp = agentTempFolder(a.dataDir, a.stateRoot, a.agentId);
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  const extra = (env.SVC_SANDBOX_READ ?? '').split(':').filter((p) => p.startsWith('/'));
  return { rw: [a.home, ...a.allowedPaths, tmp], ro: [...SYSTEM_READ, nodeFolder(), ...extra], abi, tmp };
}

/** The wrapper's command line that runs `program args` confined by `plan` (shells). */
export function wrapperArgs(plan: ConfinePlan, program: string, args: readonly string[]): { file: string; args: string[] } {
  const out = ['--abi', String(plan.abi)];
  for (const p of plan.rw) out.push('--rw', p);
  for (const p of plan.ro) out.push('--ro', p);
  return { file: WRAPPER, args: [...out, '--', program, ...args] };
}
