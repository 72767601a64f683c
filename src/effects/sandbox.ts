import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { SANDBOX_UNAVAILABLE_MESSAGE, sandboxPartMissingMessage, type ConfinePlan, type SandboxSupport } from '../domain/sandbox.js';
import { findExecutable, nativePartStatus } from './nativeParts.js';
import { nativeHelper } from './shellSpawn.js';

/**
 * The kernel side of the agent sandbox (behaviour.md §15, docs/sandbox.md): which Landlock ABI
 * this machine offers, where the shells' exec wrapper is, and the plan of one agent's confinement.
 * The rules themselves are built and applied natively (native/confine.h).
 */

/** The system trees every confined program may read and execute. */
const SYSTEM_READ = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/proc', '/sys'];

let wrapperCache: string | null | undefined;

/** The exec wrapper of confined shells (native/sandbox.cc), prebuilt or built beside the spawn helper. */
function wrapper(): string | null {
  if (wrapperCache === undefined) wrapperCache = process.platform === 'linux' ? findExecutable('loom_sandbox') : null;
  return wrapperCache;
}

let kernelAbiCache: number | undefined;

/** The kernel's ABI, asked once (it cannot change while the daemon runs); 0 without the helpers. */
function kernelAbi(): number {
  if (kernelAbiCache === undefined) {
    const lib = nativeHelper();
    kernelAbiCache = lib?.landlockAbi && wrapper() !== null ? lib.landlockAbi() : 0;
  }
  return kernelAbiCache;
}

/**
 * The native part the sandbox needs and cannot have, with why; null when both are there. The
 * kernel cannot be asked without them, so this comes before any word about the kernel.
 */
export function missingSandboxPart(): { part: string; reason: string } | null {
  if (process.platform !== 'linux') return { part: 'loom_sandbox', reason: `Landlock is Linux only, this is ${process.platform}` };
  const lib = nativeHelper();
  if (!lib) {
    const s = nativePartStatus('loom_spawn');
    return { part: 'loom_spawn', reason: s && !s.loaded ? s.reason : 'not loaded' };
  }
  if (!lib.landlockAbi) return { part: 'loom_spawn', reason: 'the loaded helper predates the sandbox; rebuild it' };
  if (wrapper() === null) {
    const s = nativePartStatus('loom_sandbox');
    return { part: 'loom_sandbox', reason: s && !s.loaded ? s.reason : 'not found' };
  }
  return null;
}

/** The message a `workspace` agent's commands get when nothing can be confined: the missing part, else the kernel. */
export function sandboxRefusal(): string {
  const missing = missingSandboxPart();
  return missing ? sandboxPartMissingMessage(missing.part, missing.reason) : SANDBOX_UNAVAILABLE_MESSAGE;
}

/**
 * The Landlock ABI used: the kernel's (through the native helper), capped by LOOM_SANDBOX_ABI_MAX
 * (0 simulates a kernel without Landlock; tests use it to check the fail-closed path). 0 when the
 * native helper or the wrapper is missing.
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
  if (abi > 0) return { available: true, mechanism: 'landlock', abi };
  return { available: false, mechanism: 'landlock', abi, reason: sandboxRefusal() };
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
  const file = wrapper();
  // A plan exists only where the wrapper was found (confinePlan); never start a shell unconfined.
  if (file === null) throw new Error(sandboxRefusal());
  return { file, args: [...out, '--', program, ...args] };
}
