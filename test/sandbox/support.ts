import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import type { LoomClient } from '../../src/client/index.js';

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
