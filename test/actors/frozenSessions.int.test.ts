import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applySessionChange, newSession, type SessionChange, type SessionEvent, type SessionState } from '../../src/domain/session.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { deepFreeze, isDeepFrozen } from '../helpers/deepFreeze.js';

/**
 * Session memory is data (architecture.md "One read model"): the in-process app of every suite
 * freezes each topic context as soon as a snapshot holds it (test/helpers/app.ts), so the document,
 * variable and undo suites run over frozen sessions. This file checks that the freezer is on and
 * bites, and that a session is rebuilt from its `session.*` events alone, each a plain record.
 */
let app: TestApp;
let home: string;
const events: SessionEvent[] = [];

beforeAll(async () => {
  app = await startApp();
  home = tempDir('loom-home-');
  writeFileSync(join(home, 'a.md'), '# Alpha\n\n## Intro\n\nHello.\n');
  writeFileSync(join(home, 'b.md'), '# Beta\n');
  const r = await app.client().registerAgent({ agent_id: 'leo', home });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  app.c.system.inspection.observeSessions((ev) => events.push(ev));
});
afterAll(async () => { await app.close(); });

const run = async (topic: string, cmd: string) => {
  const r = await app.client('leo').exec(topic, cmd);
  if (!r.head) throw new Error('no head');
  return { ok: r.head.ok, body: r.body ?? '' };
};
const session = (topic: string): SessionState => app.c.system.topicStatuses('leo').find((t) => t.session.ref.topic === topic)!.session;

/** The session `changes` make of a fresh one, each change first passed through structuredClone (plain data only). */
function rebuild(base: SessionState, changes: readonly SessionChange[]): SessionState {
  return changes.reduce((s, c) => applySessionChange(s, structuredClone(c)), base);
}

describe('frozen topic contexts', () => {
  it('when documents, variables and file edits ran, then the topic context is deeply frozen and a write to it throws', async () => {
    expect((await run('main', '/open ~/a.md')).ok).toBe(true);
    expect((await run('main', '/set {city}=Seoul')).ok).toBe(true);
    expect((await run('main', '/write ~/c.txt\none')).ok).toBe(true);
    const s = session('main');
    expect(isDeepFrozen(s)).toBe(true);
    expect(() => (s.vars as Map<string, string>).set('city', 'Busan')).toThrow(TypeError);
    expect(() => (s.reads as Map<string, string>).clear()).toThrow(TypeError);
    expect(() => (s.history as unknown[]).push({})).toThrow(TypeError);
    expect(() => { (s as { lastResponse: unknown }).lastResponse = {}; }).toThrow(TypeError);
    expect(s.vars.get('city')).toBe('Seoul');
    expect(app.frozenProblems).toEqual([]);
  });

  it('when a session holds a buffer, then the freezer reports it (bytes belong on disk, not in a session)', () => {
    expect(deepFreeze({ undo: [{ before: Buffer.from('x') }] })).toEqual(['$.undo.0.before: Buffer of 1 bytes']);
    expect(deepFreeze({ run: () => 1 })).toEqual(['$.run: a function']);
  });
});

describe('a session rebuilt from its events (replay, the inspector)', () => {
  it('when /open, /open, /back, /edit, /write, /replace, /undo, /set and /unset ran, then folding the emitted changes over a fresh session gives the live one', async () => {
    const topic = 'fold';
    const first = events.length;
    const steps = [
      '/open ~/a.md', '/open ~/b.md', '/back', '/open #intro', '/set {k}=v', '/edit ~/b.md', '/write ~/b.md\n# Beta two',
      '/replace ~/b.md --old "two"\nthree', '/undo', '/write ~/new.txt\nfresh', '/unset {k}',
    ];
    for (const cmd of steps) expect([cmd, (await run(topic, cmd)).ok]).toEqual([cmd, true]);
    const live = session(topic);
    const mine = events.slice(first).filter((e) => e.topic === topic);
    expect(new Set(mine.map((e) => e.sessionId))).toEqual(new Set([live.id]));
    const changes = mine.map(({ agentId: _a, topic: _t, sessionId: _s, at: _at, ...change }) => change as SessionChange);
    const rebuilt = rebuild({ ...newSession('leo', live.ref, live.createdAt), id: live.id }, changes);
    expect(rebuilt).toEqual(live);
    expect(live.history).toEqual([]);
    expect(live.undo.map((u) => [u.command, u.display])).toEqual([['/write', '~/new.txt']]);
    expect(readFileSync(join(home, 'b.md'), 'utf8')).toBe('# Beta two');
  });

  it('when a file is edited, then the session holds a reference to a copy in the agent state folder, and the copy goes when the session ends', async () => {
    writeFileSync(join(home, 'd.txt'), 'before\n');
    expect((await run('undo', '/edit ~/d.txt')).ok).toBe(true);
    expect((await run('undo', '/write ~/d.txt\nafter')).ok).toBe(true);
    const [ref] = session('undo').undo;
    expect(ref.copy).toMatch(new RegExp(`^${app.dataDir}/agents/leo/state/undo/${session('undo').id}/[0-9a-f]{64}\\.[0-9a-f]{8}$`));
    expect(readFileSync(ref.copy as string, 'utf8')).toBe('before\n');
    expect((await run('undo', '/write ~/d.txt\nagain')).ok).toBe(true);
    // One copy per file: the earlier one went with the record it belonged to.
    expect(existsSync(ref.copy as string)).toBe(false);
    expect(readdirSync(join(app.dataDir, 'agents/leo/state/undo', String(session('undo').id)))).toHaveLength(1);
    const folder = join(app.dataDir, 'agents/leo/state/undo', String(session('undo').id));
    expect((await app.client('leo').closeSession('leo', 'undo')).status).toBe(200);
    expect(existsSync(folder)).toBe(false);
  });
});
