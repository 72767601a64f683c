import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { addAgent, mint, send } from '../capabilities/helpers.js';

/**
 * spec §3: "consumption is atomic; of two racing requests only one can succeed". 20 requests per
 * trial are in flight at once over 20 sockets, each presenting the same single-use token.
 */

const TRIALS = 50;
const PARALLEL = 20;

let app: TestApp;
let home: string;
let agent: Agent;

beforeAll(async () => {
  app = await startApp();
  home = await addAgent(app.base, 'racer');
  writeFileSync(join(home, 'prize.txt'), 'prize');
  agent = new Agent({ keepAlive: true, maxSockets: PARALLEL });
});
afterAll(async () => {
  agent.destroy();
  await app.close();
});

describe('single-use race (spec §3 Capability "consumption is atomic")', () => {
  it(`when ${PARALLEL} GETs race with one single-use token, ${TRIALS} times, then exactly one gets 200 each time`, async () => {
    const tally = { ok: 0, consumed: 0, other: 0 };
    for (let t = 0; t < TRIALS; t++) {
      const c = await mint(app.base, { agent_id: 'racer', verbs: ['GET'], ttl_ms: 60_000, single_use: true });
      const answers = await Promise.all(Array.from({ length: PARALLEL }, () =>
        send(app.port, { path: '/fs/prize.txt', headers: { Authorization: `Bearer ${c.secret}` }, agent })));
      const ok = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 401 && a.json?.reason === 'consumed');
      tally.ok += ok.length;
      tally.consumed += refused.length;
      tally.other += PARALLEL - ok.length - refused.length;
      expect(ok).toHaveLength(1);
      expect(ok[0].body.toString()).toBe('prize');
      expect(refused).toHaveLength(PARALLEL - 1);
    }
    process.stdout.write(`race: ${TRIALS} trials × ${PARALLEL} GETs → 200: ${tally.ok}, 401 consumed: ${tally.consumed}, other: ${tally.other}\n`);
  });

  it('when 20 PUTs race with one single-use token, then exactly one writes and the file holds its body', async () => {
    for (let t = 0; t < 10; t++) {
      const c = await mint(app.base, { agent_id: 'racer', verbs: ['PUT'], ttl_ms: 60_000, single_use: true });
      const answers = await Promise.all(Array.from({ length: PARALLEL }, (_, i) =>
        send(app.port, { method: 'PUT', path: `/fs/put-race-${t}.txt`, headers: { Authorization: `Bearer ${c.secret}` }, body: `writer-${i}`, agent })));
      const ok = answers.map((a, i) => [a, i] as const).filter(([a]) => a.status === 201);
      expect(ok).toHaveLength(1);
      expect(answers.filter((a) => a.status === 401 && a.json?.reason === 'consumed')).toHaveLength(PARALLEL - 1);
      expect(readFileSync(join(home, `put-race-${t}.txt`), 'utf8')).toBe(`writer-${ok[0][1]}`);
    }
  });

  it('when the racing requests all miss (404), then none burns the token and it is still live', async () => {
    const c = await mint(app.base, { agent_id: 'racer', verbs: ['GET'], ttl_ms: 60_000, single_use: true });
    const answers = await Promise.all(Array.from({ length: PARALLEL }, () =>
      send(app.port, { path: '/fs/missing.txt', headers: { Authorization: `Bearer ${c.secret}` }, agent })));
    // Each either failed itself (404, reservation released) or arrived during a reservation (401 consumed).
    expect(answers.every((a) => a.status === 404 || (a.status === 401 && a.json?.reason === 'consumed'))).toBe(true);
    expect(answers.some((a) => a.status === 404)).toBe(true);
    const after = await send(app.port, { path: '/fs/prize.txt', headers: { Authorization: `Bearer ${c.secret}` }, agent });
    expect(after.status).toBe(200);
  });
});
