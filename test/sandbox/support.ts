import { expect } from '@jest/globals';
import type { LoomClient } from '../../src/client/index.js';
import { landlockAbi, missingSandboxPart } from '../../src/effects/sandbox.js';

/** The kernel's Landlock ABI through the native helper, as the daemon finds it (0: no Landlock, or a part is missing). */
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

/** One command's outcome: ok, code and the body without the `re:` line. */
export interface Ran {
  ok: boolean;
  code: string | null;
  body: string;
}

/** Run a command through POST /exec and wait for its answer. */
export async function run(c: LoomClient, topic: string, cmd: string): Promise<Ran> {
  const r = await c.exec(topic, cmd);
  expect(r.status).toBe(200);
  expect(r.done).toBe(true);
  return { ok: r.head?.ok ?? false, code: r.head?.code ?? null, body: r.body ?? '' };
}

/** A CLI-action document whose one action runs `./probe.sh` in its folder (the test writes the script). */
export const PROBE_DOC = [
  '---', 'name: probe', 'type: app', '---', '', '# Probe', '', '```act.probe', 'CLI bash ./probe.sh', '```', '',
].join('\n');
