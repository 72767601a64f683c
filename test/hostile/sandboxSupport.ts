import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from '@jest/globals';
import type { LoomClient } from '../../src/client/index.js';
import { kernelLandlockAbi, run, skipReason, type Ran } from '../sandbox/support.js';

/**
 * Shared pieces of the sandbox escape suites (test/hostile/sandbox*.e2e.test.ts, behaviour.md
 * §15.1–§15.6): when they run, the spec's refusal bodies, and a way to run one shell line for an
 * agent through /exec, a `bash:<name>` shell or a CLI action.
 */

/** behaviour.md §15.3: the body of a request from inside that names another agent. */
export const ACTS_AS_SELF = '{"error":"Forbidden: a sandboxed agent acts only as itself"}';
/** behaviour.md §15.3: the body of a request from inside to a route that changes agents or the daemon. */
export const NOT_FROM_INSIDE = '{"error":"Forbidden: not allowed from inside the sandbox"}';

/** Why this machine cannot enforce all four guarantees (files, network, processes, terminals), or null. */
export function escapeSkipReason(): string | null {
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

/** `describe`, or `describe.skip` with the reason printed once, for one suite file. */
export function escapeSuite(file: string): { suite: typeof describe | typeof describe.skip; reason: string | null } {
  const reason = escapeSkipReason();
  if (reason) process.stderr.write(`${file}: skipped: ${reason}\n`);
  return { suite: reason ? describe.skip : describe, reason };
}

/** What a command printed: the answer's body after its `---` line. */
export function output(body: string): string {
  const i = body.indexOf('---\n');
  return i < 0 ? '' : body.slice(i + 4);
}

/** The ways an agent's programs start (behaviour.md §15): one-shot /exec, a `bash:<name>` shell, a CLI action. */
export type Channel = 'exec' | 'bash' | 'cli';

/**
 * Run one shell line for the agent of `c` through `channel`; a CLI action runs `./probe.sh` of the
 * document already open in topic `doc` (test/sandbox/support.ts PROBE_DOC), which gets the line.
 */
export async function attempt(c: LoomClient, home: string, channel: Channel, line: string): Promise<Ran & { out: string }> {
  if (channel === 'cli') {
    writeFileSync(join(home, 'probe.sh'), `${line}\n`);
    const r = await run(c, 'doc', '/act.probe');
    return { ...r, out: r.body };
  }
  const r = await run(c, channel === 'bash' ? 'bash:t' : 'main', `/exec ${line}`);
  return { ...r, out: output(r.body) };
}

/** A request to the daemon's port from a shell line: curl prints the body, a newline and the status. */
export function curlDaemon(method: string, path: string, opts: { header?: string; body?: Record<string, unknown>; curl?: string } = {}): string {
  const parts = ['curl -sS', opts.curl ?? '', `-X ${method}`, "-w '\\n%{http_code}'"];
  if (opts.header) parts.push(`-H '${opts.header}'`);
  if (opts.body) parts.push(`-H 'Content-Type: application/json' -d '${JSON.stringify(opts.body)}'`);
  parts.push(`"http://127.0.0.1:$SVC_PORT${path}"`);
  return parts.filter(Boolean).join(' ');
}

/** The last answer curlDaemon printed: its status and body. */
export function lastAnswer(out: string): { status: number; body: string } {
  const lines = out.trimEnd().split('\n');
  return { status: Number(lines[lines.length - 1]), body: lines.slice(0, -1).join('\n') };
}
