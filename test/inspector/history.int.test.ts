import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileMasks, sessionMask, shown } from '../../src/domain/redact.js';
import { INSPECTOR_IDS } from '../../src/services/inspectionMessages.js';
import type { SessionEvent } from '../../src/domain/session.js';
import { HISTORY_PER_TOPIC, TopicHistories } from '../../src/services/topicHistory.js';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import type { WireJson } from '../helpers/json.js';
import { openInspector } from './support.js';

/** behaviour.md §13.7: each topic's last changes, kept whether or not anyone watches. */

const T = 'topic:a/main';
const iso = (ms: number) => new Date(ms).toISOString();
const session = (type: string, extra: Record<string, unknown>, at: number) => ({ type, agentId: 'a', topic: 'main', sessionId: 1, at, ...extra }) as unknown as SessionEvent;

describe('the history ring of one topic', () => {
  it('keeps state changes (not snapshots that leave the state) and the shown session changes, oldest first, from the topic\'s start', () => {
    const h = new TopicHistories();
    h.started(T, 'idle', 1000);
    expect(h.of(T)).toEqual({ since: 1000, truncated: false, entries: [] });
    let now = 1100;
    const clock = () => now;
    h.snapshot(T, 'executing', 'command.arrive', clock);
    now = 1200;
    h.snapshot(T, 'executing', 'command.arrive', clock);
    now = 3100;
    h.snapshot(T, 'idle', 'command.done', clock);
    h.session(T, session('session.opened', { doc: { uri: 'file:///h/a.md', title: 'Alpha', currentBlock: null } }, 3200), 'ignored');
    h.session(T, session('session.navigated', { block: '#intro' }, 3300), 'file:///h/a.md');
    h.session(T, session('session.set', { scope: 'session', values: [['city', 'Seoul-secret-1']] }, 3400), null);
    h.session(T, session('session.cleared', { scope: 'session', names: ['city'] }, 3500), null);
    h.session(T, session('session.closed', {}, 3600), null);
    // Not shown: a base folder or shortcuts change.
    expect(h.session(T, session('session.based', { baseDir: '/x' }, 3700), null)).toBeNull();
    const view = h.of(T);
    expect(view).toEqual({
      since: 1000, truncated: false, entries: [
        { at: iso(1100), type: 'state', from: 'idle', to: 'executing', event: 'command.arrive' },
        { at: iso(3100), type: 'state', from: 'executing', to: 'idle', event: 'command.done' },
        { at: iso(3200), type: 'session.opened', uri: 'file:///h/a.md', title: 'Alpha' },
        { at: iso(3300), type: 'session.navigated', uri: 'file:///h/a.md', block: '#intro' },
        { at: iso(3400), type: 'session.set', scope: 'session', names: ['city'] },
        { at: iso(3500), type: 'session.cleared', scope: 'session', names: ['city'] },
        { at: iso(3600), type: 'session.closed' },
      ],
    });
    expect(JSON.stringify(view)).not.toContain('Seoul-secret-1');
  });

  it(`keeps only the last ${HISTORY_PER_TOPIC}: then it says so and starts at the oldest kept change`, () => {
    const h = new TopicHistories();
    h.started(T, 'idle', 0);
    for (let i = 1; i <= 70; i++) h.snapshot(T, i % 2 === 1 ? 'executing' : 'idle', i % 2 === 1 ? 'command.arrive' : 'command.done', () => i * 10);
    const view = h.of(T);
    expect(HISTORY_PER_TOPIC).toBe(60);
    expect(view?.entries).toHaveLength(60);
    expect(view?.truncated).toBe(true);
    expect(view?.since).toBe(110);
    expect(view?.entries[0]).toEqual({ at: iso(110), type: 'state', from: 'idle', to: 'executing', event: 'command.arrive' });
    expect(view?.entries[59]).toEqual({ at: iso(700), type: 'state', from: 'executing', to: 'idle', event: 'command.done' });
  });

  it('keeps a document address as opened, which the readers\' rule masks; a topic met first by a change starts then; a forgotten topic is unknown', () => {
    const h = new TopicHistories();
    h.session(T, session('session.opened', { doc: { uri: 'https://x.test/?k=tok-value-42&token=t0k', title: 'tok-value-42 page', currentBlock: null } }, 500), null);
    const masks = compileMasks([['tok-value-42', sessionMask('k')]]);
    expect(h.of(T)?.entries).toEqual([{ at: iso(500), type: 'session.opened', uri: 'https://x.test/?k=tok-value-42&token=t0k', title: 'tok-value-42 page' }]);
    expect(shown(h.of(T), masks, INSPECTOR_IDS)).toEqual({ since: 500, truncated: false, entries: [{ at: iso(500), type: 'session.opened', uri: 'https://x.test/?k={k}&token=<secret>', title: '{k} page' }] });
    h.forget(T);
    expect(h.of(T)).toBeNull();
    h.snapshot(T, 'executing', 'command.arrive', () => 900);
    expect(h.of(T)).toEqual({ since: 900, truncated: false, entries: [] });
  });
});

describe('history, limits and positions in the daemon (behaviour.md §13.7)', () => {
  let t: TestApp;
  let home: string;
  beforeAll(async () => {
    t = await startApp({ queue: { max: 2, waitMs: 120000 } });
    home = tempDir('loom-hist-home-');
    writeFileSync(join(home, 'a.md'), '# Alpha\n\nText.\n\n## Intro\n\nHello.\n');
    const r = await t.client().registerAgent({ agent_id: 'hist', home });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(home, { recursive: true, force: true });
  });

  type Topic = Record<string, WireJson>;
  const topic = async (name: string): Promise<Topic> => {
    const r = await call(t.base, 'GET', '/inspect/state');
    return (r.body as { agents: Array<{ agent_id: string; topics: Topic[] }> }).agents.find((a) => a.agent_id === 'hist')!.topics.find((x) => x.topic === name)!;
  };
  const until = async (ok: () => Promise<boolean>) => { for (let i = 0; i < 400 && !(await ok()); i++) await new Promise((r) => setTimeout(r, 10)); };

  it('when a command ran with nobody watching, then the snapshot holds its start and end, the time between them what it ran', async () => {
    const before = Date.now();
    const r = await t.client('hist').exec('ran', '/exec sleep 0.3');
    expect(r.head?.ok).toBe(true);
    const ran = await topic('ran');
    expect(ran.history.map((e: Topic) => `${e.type} ${e.from}->${e.to} ${e.event}`)).toEqual(['state idle->executing command.arrive', 'state executing->idle command.done']);
    const [start, end] = ran.history.map((e: Topic) => Date.parse(e.at));
    expect(end - start).toBeGreaterThanOrEqual(300);
    expect(end - start).toBeLessThan(3000);
    expect(ran.history_truncated).toBe(false);
    expect(Date.parse(ran.history_since)).toBeGreaterThanOrEqual(before - 5);
    expect(Date.parse(ran.history_since)).toBeLessThanOrEqual(start);
    expect(ran.recent[0]).toMatchObject({ ticket: 't1', ok: true });
  });

  it('when commands wait, then the topic carries its limits and each waiting one its 1-based place; a refusal names the limit it hit', async () => {
    const c = t.client('hist');
    const slow = c.exec('q', '/exec sleep 30', 'r-run');
    await until(async () => (await topic('q'))?.running !== null && (await topic('q'))?.running !== undefined);
    const w1 = c.exec('q', '/info', 'r-w1');
    await until(async () => (await topic('q')).waiting.length === 1);
    const w2 = c.exec('q', '/help', 'r-w2');
    await until(async () => (await topic('q')).waiting.length === 2);
    const q = await topic('q');
    expect(q).toMatchObject({ state: 'executing', queue_limit: 2, wait_limit_ms: 120000 });
    expect(q.running).toMatchObject({ ticket: 't1', request_id: 'r-run', via: 'exec', started_at: expect.any(String) });
    expect(q.waiting.map((w: Topic) => [w.position, w.ticket, w.request_id, w.via])).toEqual([[1, 't2', 'r-w1', 'exec'], [2, 't3', 'r-w2', 'exec']]);
    const full = await c.exec('q', '/info', 'r-full');
    expect(full.head?.ok ?? false).toBe(false);
    const refused = (await topic('q')).recent.find((x: Topic) => x.code === 'QUEUE_FULL');
    expect(refused).toMatchObject({ ticket: 't4', request_id: 'r-full', ok: false, queue_limit: 2 });
    expect(refused).not.toHaveProperty('wait_limit_ms');
    await call(t.base, 'DELETE', '/sessions/hist/q');
    await Promise.allSettled([slow, w1, w2]);
  });

  it('when /open, /set and /close run, then the history and the live feed show them with names, never the value set', async () => {
    const s = await openInspector(t.port);
    try {
      const c = t.client('hist');
      expect((await c.exec('doc', '/open ~/a.md')).head?.ok).toBe(true);
      expect((await c.exec('doc', '/open #intro')).head?.ok).toBe(true);
      expect((await c.exec('doc', '/set {pin} = "hist-secret-9917"')).head?.ok).toBe(true);
      expect((await c.exec('doc', '/close')).head?.ok).toBe(true);
      await s.until((m) => m.type === 'session' && m.event === 'session.closed', 'session.closed');
      const sessions = s.messages.filter((m) => m.type === 'session');
      expect(sessions.map((m) => m.event)).toEqual(['session.opened', 'session.navigated', 'session.set', 'session.closed']);
      const uri = sessions[0].uri as string;
      expect(uri.endsWith('/a.md')).toBe(true);
      expect(sessions[0]).toEqual({ type: 'session', actor: 'topic:hist/doc', event: 'session.opened', uri, title: 'Alpha', at: expect.any(String) });
      expect(sessions[1]).toEqual({ type: 'session', actor: 'topic:hist/doc', event: 'session.navigated', uri, block: '#intro', at: expect.any(String) });
      expect(sessions[2]).toEqual({ type: 'session', actor: 'topic:hist/doc', event: 'session.set', scope: 'session', names: ['pin'], at: expect.any(String) });
      const doc = await topic('doc');
      expect(doc.history.filter((e: Topic) => e.type !== 'state').map((e: Topic) => e.type)).toEqual(['session.opened', 'session.navigated', 'session.set', 'session.closed']);
      expect(doc.history.find((e: Topic) => e.type === 'session.set')).toEqual({ at: expect.any(String), type: 'session.set', scope: 'session', names: ['pin'] });
      // §13.4: the value is nowhere, neither in what the feed sent nor in the snapshot.
      expect(s.raw.join('\n')).not.toContain('hist-secret-9917');
      expect(JSON.stringify(await call(t.base, 'GET', '/inspect/state'))).not.toContain('hist-secret-9917');
    } finally {
      await s.close();
    }
  });

  it(`when more than ${HISTORY_PER_TOPIC} changes happened, then the snapshot keeps the last ones and says where its history starts`, async () => {
    const c = t.client('hist');
    for (let i = 0; i < 35; i++) await c.exec('many', '/help');
    const many = await topic('many');
    expect(many.history).toHaveLength(HISTORY_PER_TOPIC);
    expect(many.history_truncated).toBe(true);
    expect(many.history_since).toBe(many.history[0].at);
    expect(many.history[59]).toMatchObject({ type: 'state', from: 'executing', to: 'idle', event: 'command.done' });
  });
});
