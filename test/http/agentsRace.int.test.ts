import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

let t: TestApp;
beforeAll(async () => { t = await startApp({ memory: false }); });
afterAll(async () => { await t.close(); });

describe('POST /agents under concurrency (spec §4.3: one agent per id)', () => {
  it('when 40 registrations of one new id with different homes arrive together, then exactly one is created and the stored home exists', async () => {
    const root = tempDir();
    const homes = Array.from({ length: 40 }, (_, i) => join(root, `home-${i}`));
    const answers = await Promise.all(homes.map((home) => call(t.base, 'POST', '/agents', { body: { agent_id: 'racer', home } })));
    expect(answers.map((a) => a.status)).toEqual(homes.map(() => 200));
    expect(answers.filter((a) => (a.body as { created?: boolean }).created === true)).toHaveLength(1);
    const stored = t.c.system.agentProfile('racer')?.home;
    expect(homes).toContain(stored);
    expect(existsSync(stored as string)).toBe(true);
    // Every answer names a home that was asked for; the last one written is the stored one.
    for (const a of answers) expect(homes).toContain((a.body as { home: string }).home);
  });
});
