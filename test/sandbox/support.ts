import { expect } from '@jest/globals';
import type { LoomClient } from '../../src/client/index.js';

export { guaranteesSkipReason, kernelLandlockAbi, skipReason } from '../helpers/landlock.js';

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
