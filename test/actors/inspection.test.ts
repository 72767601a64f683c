import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { InspectionEvent } from 'xstate';
import { call, startApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t.close(); });

describe('inspection hook (issue 2 item 11)', () => {
  it('when an observer subscribes, then it sees agent and topic actors and their queue events without touching machines', async () => {
    const seen: InspectionEvent[] = [];
    const off = t.c.system.factory.subscribe((e) => seen.push(e));
    await call(t.base, 'POST', '/agents', { body: { agent_id: 'spy' } });
    await t.client('spy').exec('watched', '/help');
    off();
    const systemIds = new Set(seen.map((e) => (e.actorRef as unknown as { options: { systemId?: string } }).options.systemId).filter(Boolean));
    expect(systemIds).toContain('agent:spy');
    expect(systemIds).toContain('topic:spy:watched');
    const eventTypes = seen.filter((e) => e.type === '@xstate.event').map((e) => (e as { event: { type: string } }).event.type);
    expect(eventTypes).toContain('command.arrive');
    expect(eventTypes).toContain('xstate.done.actor.runCommand');
    const count = seen.length;
    await t.client('spy').exec('watched', '/help');
    expect(seen.length).toBe(count);
  });

  it('a throwing observer never breaks the actor it watches, and is reported once (not per event)', async () => {
    // The warning is captured, not printed: npm test output stays clean.
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      let calls = 0;
      const off = t.c.system.factory.subscribe(() => { calls++; throw new Error('observer bug'); });
      const r = await t.client('spy').exec('watched', '/info');
      await t.client('spy').exec('watched', '/info');
      off();
      expect(r.head?.ok).toBe(true);
      expect(calls).toBeGreaterThan(1);
      expect(warn.mock.calls).toEqual([['inspection listener failed: observer bug']]);
    } finally {
      warn.mockRestore();
    }
  });
});
