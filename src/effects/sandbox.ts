import { lstatSync, mkdirSync, chmodSync, realpathSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { basename, dirname, join, sep } from 'node:path';
import type { NetworkPolicy } from '../domain/networkPolicy.js';
import { GUARANTEES, neededGuarantees, type ConfinePlan, type Guarantee, type MissingGuarantee, type SandboxSupport } from '../domain/sandbox.js';
import { findExecutable, nativePartStatus } from './nativeParts.js';
import { nativeHelper } from './shellSpawn.js';

/**
 * The kernel side of the agent sandbox (behaviour.md §15, docs/sandbox.md): which Landlock ABI
 * and namespaces this machine offers, which guarantees follow (§15.1), where the shells' exec
 * wrapper is, and the plan of one agent's confinement. The rules themselves are built and applied
 * natively (native/confine.h).
 */

/** The system trees every confined program may read and execute (`/proc`: its own, mounted in its PID namespace). */
const SYSTEM_READ = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/sys'];


/** Loom's own code, readable from inside so the `loom` CLI works in a confined shell (behaviour.md §15.3). */
const LOOM_CODE = ['bin', 'dist', 'node_modules', 'build', 'prebuilds', 'package.json'].map((p) => fileURLToPath(new URL(`../../${p}`, import.meta.url)));


let kernelAbiCache: number | undefined;
let namespacesCache: string | undefined;

let wrapperCache: string | null | undefined;

/** The exec wrapper of confined shells (native/sandbox.cc), prebuilt or built beside the spawn helper (effects/nativeParts.ts). */
function wrapper(): string | null {
  if (wrapperCache === undefined) wrapperCache = process.platform === 'linux' ? findExecutable('loom_sandbox') : null;
  return wrapperCache;
}

/**
 * The native part the sandbox needs and cannot have, with why (behaviour.md §17); null when both
 * are there. The kernel cannot be asked without them, so this comes before any word about it.
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

/** True when the native helper and the shells' wrapper are both there. */
function helpersBuilt(): boolean {
  return missingSandboxPart() === null;
}

/** Why the sandbox cannot be used for want of a native part: the part and the reason, as messages name it. */
function missingPartReason(): string {
  const m = missingSandboxPart();
  return m ? `Loom's native part ${m.part} is missing: ${m.reason}` : '';
}

/** The kernel's ABI, asked once (it cannot change while the daemon runs); 0 without the helpers. */
function kernelAbi(): number {
  if (kernelAbiCache === undefined) {
    const lib = nativeHelper();
    kernelAbiCache = lib?.landlockAbi && helpersBuilt() ? lib.landlockAbi() : 0;
  }
  return kernelAbiCache;
}

/** "" when a confined child can have its own user, mount and PID namespaces here, else why not (asked once). */
function namespacesProblem(env: NodeJS.ProcessEnv): string {
  if (env.LOOM_SANDBOX_NO_NAMESPACES === '1') return 'user namespaces are turned off (LOOM_SANDBOX_NO_NAMESPACES=1)';
  if (namespacesCache === undefined) {
    const probe = nativeHelper()?.probeNamespaces;
    namespacesCache = probe ? probe() : 'the native helper cannot create namespaces';
  }
  return namespacesCache;
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
 * Hide the daemon's environment (its tokens) from /proc/<pid>/environ. A confined program no longer
 * sees the daemon's /proc entry at all (its own PID namespace); this still covers the user's other
 * programs, which may read same-user processes' environment.
 */
export function scrubDaemonEnvironment(): void {
  nativeHelper()?.scrubEnviron?.();
}

/** Why each guarantee cannot be enforced here, in `/describe` order (behaviour.md §15.1). */
function missingGuarantees(env: NodeJS.ProcessEnv): MissingGuarantee[] {
  const abi = landlockAbi(env);
  if (!helpersBuilt()) return GUARANTEES.map((guarantee) => ({ guarantee, reason: missingPartReason() }));
  if (abi === 0) return GUARANTEES.map((guarantee) => ({ guarantee, reason: 'this kernel has no Landlock' }));
  const out: MissingGuarantee[] = [];
  if (abi < 4) out.push({ guarantee: 'network', reason: `Landlock ABI ${abi} has no TCP rules (ABI 4, Linux 6.7)` });
  const ns = namespacesProblem(env);
  if (abi < 6) out.push({ guarantee: 'processes', reason: `Landlock ABI ${abi} has no signal scoping (ABI 6, Linux 6.12)` });
  else if (ns !== '') out.push({ guarantee: 'processes', reason: `no private PID namespace: ${ns}` });
  return out;
}

/** `/describe`'s `sandbox` entry, less the daemon default (behaviour.md §15, §15.1). */
export function sandboxSupport(env: NodeJS.ProcessEnv = process.env): SandboxSupport {
  const abi = landlockAbi(env);
  const missing = missingGuarantees(env);
  const guarantees = Object.fromEntries(GUARANTEES.map((g) => [g, !missing.some((m) => m.guarantee === g)])) as Record<Guarantee, boolean>;
  return { available: abi > 0 && helpersBuilt(), mechanism: 'landlock', abi, guarantees, missing, udp: 'open' };
}

/** The install prefix of the running node (`/usr/local` for `/usr/local/bin/node`), so npm and its modules are readable. */
function nodeFolder(): string {
  const bin = dirname(process.execPath);
  return basename(bin) === 'bin' ? dirname(bin) : bin;
}

/** Where an agent's private temp folder is: `<data>/<stateRoot>/<id>/tmp`, under the data directory's real path. */
export function agentTempFolder(dataDir: string, stateRoot: string, agentId: string): string {
  let base = dataDir;
  try {
    base = realpathSync.native(dataDir);
  } catch {
    // Not there yet: the daemon creates it at start; the unresolved path is then the real one.
  }
  return join(base, stateRoot, agentId, 'tmp');
}

/**
 * The private temp folder, made without following a link (behaviour.md §15.4, §15.6): whatever
 * stands at its place that is not a plain folder (a link left by an unconfined agent, a file) is
 * removed first, and the folder is 0700.
 */
function makePrivateTemp(tmp: string): void {
  mkdirSync(dirname(tmp), { recursive: true, mode: 0o700 });
  let st;
  try {
    st = lstatSync(tmp);
  } catch {
    st = null;
  }
  if (st && !st.isDirectory()) rmSync(tmp, { force: true });
  if (!st || !st.isDirectory()) mkdirSync(tmp, { mode: 0o700 });
  else if ((st.mode & 0o777) !== 0o700) chmodSync(tmp, 0o700);
}

/**
 * What an agent root is now, when it is no longer the plain folder stored at registration
 * (behaviour.md §15.4): `a symbolic link` (at the root or a folder above it), `gone`, or null when
 * it is fine. A missing allowed path is fine (nothing to grant); the native side enforces the
 * same rule without a race (openat2 with RESOLVE_NO_SYMLINKS).
 */
export function rootProblem(root: string, mustExist: boolean): string | null {
  const parts = root.split(sep).filter(Boolean);
  let cur = '';
  for (const part of parts) {
    cur = `${cur}${sep}${part}`;
    let st;
    try {
      st = lstatSync(cur);
    } catch {
      return mustExist ? 'gone' : null;
    }
    if (st.isSymbolicLink()) return cur === root ? 'now a symbolic link' : `${cur} is now a symbolic link`;
  }
  return null;
}

/** One agent's confinement inputs. */
export interface ConfineRequest {
  dataDir: string;
  stateRoot: string;
  agentId: string;
  home: string;
  allowedPaths: readonly string[];
  network: NetworkPolicy;
  /** The egress proxy's port and this agent's proxy address (behaviour.md §15.2). */
  proxy: { port: number; url: string } | null;
}

/** A plan, or why there is none: a missing guarantee, or an agent root that changed. */
export type PlanOutcome = { ok: true; plan: ConfinePlan } | { ok: false; missing: MissingGuarantee; kernelHasLandlock: boolean } | { ok: false; root: string; now: string };

/**
 * The confinement of one agent's programs (behaviour.md §15–§15.4), or why its commands must not
 * run: a guarantee its policy needs is missing here, or a root is no longer what was registered.
 * Creates the private temp folder.
 */
export function confinePlan(a: ConfineRequest, env: NodeJS.ProcessEnv = process.env): PlanOutcome {
  const missing = missingGuarantees(env);
  const needed = neededGuarantees(a.network);
  const gap = missing.find((m) => needed.includes(m.guarantee) && !(m.guarantee === 'network' && a.network === 'none' && namespacesProblem(env) === ''));
  // The kernel is blamed only when it is the kernel: a missing build names the missing parts.
  if (gap) return { ok: false, missing: gap, kernelHasLandlock: !helpersBuilt() || landlockAbi(env) > 0 };
  const proxied = a.network !== 'none' && a.network !== 'open';
  if (proxied && !a.proxy) return { ok: false, missing: { guarantee: 'network', reason: 'the egress proxy is not running' }, kernelHasLandlock: true };
  const tmp = agentTempFolder(a.dataDir, a.stateRoot, a.agentId);
  for (const [root, mustExist] of [[a.home, true], ...a.allowedPaths.map((p) => [p, false] as const)] as const) {
    const now = rootProblem(root, mustExist);
    if (now) return { ok: false, root, now };
  }
  makePrivateTemp(tmp);
  const extra = (env.SVC_SANDBOX_READ ?? '').split(':').filter((p) => p.startsWith('/'));
  return {
    ok: true,
    plan: {
      rw: [a.home, ...a.allowedPaths, tmp], ro: [...SYSTEM_READ, nodeFolder(), ...LOOM_CODE, ...extra], abi: landlockAbi(env), tmp,
      tcpPorts: a.network === 'open' ? null : proxied && a.proxy ? [a.proxy.port] : [],
      namespaces: true, netns: a.network === 'none',
      home: a.home, allowedPaths: [...a.allowedPaths], network: a.network, proxyUrl: proxied && a.proxy ? a.proxy.url : null,
    },
  };
}

/** The wrapper's command line that runs `program args` confined by `plan` (shells: their own PTY only). */
export function wrapperArgs(plan: ConfinePlan, program: string, args: readonly string[]): { file: string; args: string[] } {
  const out = ['--abi', String(plan.abi), '--own-tty'];
  for (const p of plan.rw) out.push('--rw', p);
  for (const p of plan.ro) out.push('--ro', p);
  if (plan.tcpPorts) {
    out.push('--tcp');
    for (const port of plan.tcpPorts) out.push('--tcp-port', String(port));
  }
  if (plan.namespaces) out.push('--namespaces');
  if (plan.netns) out.push('--netns');
  const file = wrapper();
  // A plan exists only where the wrapper was found (confinePlan): never start a shell unconfined.
  if (file === null) throw new Error(missingPartReason());
  return { file, args: [...out, '--', program, ...args] };
}
