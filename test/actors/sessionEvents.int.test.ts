import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionEvent } from '../../src/domain/session.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

/**
 * Session changes are events of the topic actor (architecture.md "One read model", behaviour.md
 * §13.7): a command never changes its session in place; the topic applies what it changed and emits
 * `session.*` events, in order, which the inspection hands to its readers.
 */
let app: TestApp;
let home: string;
const events: SessionEvent[] = [];

beforeAll(async () => {
  app = await startApp();
  home = tempDir('loom-home-');
  writeFileSync(join(home, 'a.md'), '# Alpha\n\nText.\n\n## Intro\n\nHello.\n');
  const r = await app.client().registerAgent({ agent_id: 'leo', home });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  app.c.system.inspection.observeSessions((ev) => events.push(ev));
});
afterAll(async () => { await app.close(); });

const run = async (cmd: string) => {
  const r = await app.client('leo').exec('main', cmd);
  if (!r.head) throw new Error('no head');
  return r;
};
const session = () => app.c.system.topicStatuses('leo').find((t) => t.session.ref.topic === 'main')!.session;

describe('session.* events (behaviour.md §13.7)', () => {
  it('when /open, /open #anchor, /set, /unset and /close run, then the topic emits opened, navigated, set, cleared, closed in that order', async () => {
    expect((await run('/open ~/a.md')).head?.ok).toBe(true);
    const opened = session();
    expect(opened.doc?.title).toBe('Alpha');
    expect((await run('/open #intro')).head?.ok).toBe(true);
    expect(session().doc?.currentBlock).toBe('#intro');
    // The session the first command saw was not changed in place: each change is a new session value.
    expect(opened.doc?.currentBlock).toBeNull();
    await run('/set {city}=Seoul');
    expect(session().vars.get('city')).toBe('Seoul');
    await run('/unset {city}');
    expect(session().vars.has('city')).toBe(false);
    await run('/close');
    expect(session().doc).toBeNull();
    expect(events.map((e) => e.type)).toEqual(['session.opened', 'session.navigated', 'session.set', 'session.cleared', 'session.closed']);
    expect(events.every((e) => e.agentId === 'leo' && e.topic === 'main' && e.sessionId === session().id)).toBe(true);
    const set = events[2];
    expect(set.type === 'session.set' && set.values.map(([n]) => n)).toEqual(['city']);
  });

  it('when a command fails, then its session is not changed and no event is emitted', async () => {
    const before = events.length;
    const s = session();
    expect((await run('/open ~/missing.md')).head?.ok).toBe(false);
    expect(session()).toBe(s);
    expect(events.length).toBe(before);
  });

  it('when the session is closed (DELETE /sessions), then the next one starts empty with a new id', async () => {
    await run('/set {a}=1');
    const old = session().id;
    expect(app.c.system.closeSession('leo', 'main')).toBe(true);
    await run('/help');
    expect(session().id).not.toBe(old);
    expect(session().vars.size).toBe(0);
  });
});
