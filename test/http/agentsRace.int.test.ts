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

describe('POST /agents and DELETE /agents/{id} racing (spec §4.3)', () => {
  it('when deletes and registrations of one id interleave, then every answer is 200, none is lost, and the end state is what the last answer said', async () => {
    const root = tempDir();
    const calls: Array<Promise<{ kind: string; status: number; body: unknown }>> = [];
    for (let i = 0; i < 30; i++) {
      if (i % 5 === 4) calls.push(call(t.base, 'DELETE', '/agents/flip').then((r) => ({ kind: 'delete', ...r })));
      else calls.push(call(t.base, 'POST', '/agents', { body: { agent_id: 'flip', home: join(root, `h${i}`) } }).then((r) => ({ kind: 'register', ...r })));
    }
    const answers = await Promise.all(calls);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    // Every registration created or updated an agent; a later one sees it (the daemon is still whole).
    const after = await call(t.base, 'POST', '/agents', { body: { agent_id: 'flip', home: join(root, 'final') } });
    expect(after.status).toBe(200);
    expect(t.c.system.agentProfile('flip')?.home).toBe(join(root, 'final'));
    const listed = (await call(t.base, 'GET', '/agents')).body as { agents: Array<{ id: string }> };
    expect(listed.agents.filter((a) => a.id === 'flip')).toHaveLength(1);
    // A registration that answered created:true came after a deletion (or was the first).
    const created = answers.filter((a) => a.kind === 'register' && (a.body as { created: boolean }).created).length;
    const deleted = answers.filter((a) => a.kind === 'delete' && (a.body as { deleted: boolean }).deleted).length;
    expect(created).toBeGreaterThanOrEqual(1);
    expect(created).toBeLessThanOrEqual(deleted + 1);
  });
});
