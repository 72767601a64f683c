import { afterAll, describe, expect, it } from '@jest/globals';
import type { RunningDaemon } from '../helpers/daemon.js';
import { fuzzSession } from './session.js';

/**
 * The bounded fuzz run of `npm test` — 2,000 generated /exec and /mcp inputs from a fixed
 * seed against the built daemon. `npm run fuzz -- --seed N --count 100000` runs the long version.
 */

const SEED = 12;
const COUNT = 2000;
let daemon: RunningDaemon | undefined;
afterAll(async () => { await daemon?.kill(); });

describe(`fuzz: ${COUNT} inputs, seed ${SEED}`, () => {
  it('never answers 5xx or INTERNAL_ERROR, every answer is a defined one, and the daemon stays up', async () => {
    const report = await fuzzSession(SEED, COUNT, (d) => { daemon = d; });
    process.stdout.write(`fuzz seed ${SEED}: ${report.sent} sent (${report.exec} /exec, ${report.mcp} /mcp, ${report.retried} re-sent after a dropped connection); statuses ${JSON.stringify(report.statuses)}\n`);
    expect(report.findings).toEqual([]);
    expect(report.sent).toBe(COUNT);
  }, 120000);
});
