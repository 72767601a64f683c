import { afterAll, describe, expect, it } from '@jest/globals';
import type { RunningDaemon } from '../helpers/daemon.js';
import { INSIDE_REQUESTS } from './inside.js';
import { fuzzSession } from './session.js';

/**
 * The bounded fuzz run of `npm test` — 2,000 generated /exec and /mcp inputs from a fixed
 * seed against the built daemon, then a confined agent's generated calls naming other agents
 * (inside.ts). `npm run fuzz -- --seed N --count 100000` runs the long version.
 */

const SEED = 12;
const COUNT = 2000;
let daemon: RunningDaemon | undefined;
afterAll(async () => { await daemon?.kill(); });

describe(`fuzz: ${COUNT} inputs, seed ${SEED}`, () => {
  it('never answers 5xx or INTERNAL_ERROR, every answer is a defined one, and the daemon stays up', async () => {
    const report = await fuzzSession(SEED, COUNT, (d) => { daemon = d; });
    process.stdout.write(`fuzz seed ${SEED}: ${report.sent} sent (${report.exec} /exec, ${report.mcp} /mcp, ${report.retried} re-sent after a dropped connection); statuses ${JSON.stringify(report.statuses)}\n`);
    process.stdout.write(report.inside.skipped ? `fuzz: the confined agent's requests skipped: ${report.inside.skipped}\n` : `fuzz: ${report.inside.sent} requests from a confined agent naming other agents, all refused\n`);
    expect(report.findings).toEqual([]);
    expect(report.sent).toBe(COUNT);
    expect(report.inside.sent).toBe(report.inside.skipped ? 0 : INSIDE_REQUESTS);
  }, 120000);
});
