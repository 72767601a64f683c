import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from '@jest/globals';
import type { LoomClient } from '../../src/client/index.js';
import { guaranteesSkipReason, run, type Ran } from '../sandbox/support.js';

/**
 * Shared pieces of the sandbox escape suites (test/hostile/sandbox*.e2e.test.ts, behaviour.md
 * §15.1–§15.6): when they run, the spec's refusal bodies, and a way to run one shell line for an
 * agent through /exec, a `bash:<name>` shell or a CLI action.
 */

/** behaviour.md §15.3: the body of a request from inside that names another agent. */
export const ACTS_AS_SELF = '{"error":"Forbidden: a sandboxed agent acts only as itself"}';
/** behaviour.md §15.3: the body of a request from inside to a route that changes agents or the daemon. */
export const NOT_FROM_INSIDE = '{"error":"Forbidden: not allowed from inside the sandbox"}';

/** `describe`, or `describe.skip` with the reason printed once, for one suite file. */
export function escapeSuite(file: string): { suite: typeof describe | typeof describe.skip; reason: string | null } {
  const reason = guaranteesSkipReason();
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
 * Run one shell line for the agent of `c` through `channel`, its error output merged into its
 * output; a CLI action runs `./probe.sh` of the document already open in topic `doc`
 * (test/sandbox/support.ts PROBE_DOC), which gets the line.
 */
export async function attempt(c: LoomClient, home: string, channel: Channel, shell: string): Promise<Ran & { out: string }> {
  // One stream: a one-shot command's stdout and stderr are two pipes, read in no set order.
  const line = `{ ${shell}; } 2>&1`;
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
