import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { InspectorMessage, LiveActor } from '../../src/services/inspection.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { watchLiveMessages } from '../helpers/liveMessages.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
  await t.client('insp').registerAgent({ agent_id: 'insp' });
});
afterAll(async () => { await t?.close(); });

const live = () => new Map<string, LiveActor>(t.c.system.inspection.liveActors(Date.now()).map((a) => [a.actor, a]));

describe('shell actors in the tree and the inspector (behaviour.md §13.2–13.4)', () => {
  it('when a bash topic has run a command, then shell:<agent>/<topic> is a live actor and the topic shows its shell entry', async () => {
    const c = t.client('insp');
    await c.exec('bash:b', '/exec cd /tmp');
    const pid = Number((await c.exec('bash:b', '/exec echo $$')).body?.split('\n').pop());
    await c.exec('bash:none', '/info');
    await c.exec('main', '/info');
    const byId = live();
    expect(byId.get('shell:insp/bash:b')).toEqual({
      actor: 'shell:insp/bash:b', machine: 'shell', state: 'ready',
      detail: { agent_id: 'insp', topic: 'bash:b', pid, cwd: '/tmp', transport: 'pty' },
    });
    expect(byId.get('topic:insp/bash:b')?.detail.shell).toEqual({ state: 'ready', pid, cwd: '/tmp' });
    expect(byId.get('topic:insp/bash:none')?.detail.shell).toEqual({ state: 'none', pid: null, cwd: null });
    expect(byId.get('topic:insp/main')?.detail.shell).toBeNull();
    await c.exec('bash:b', '/exec cd');
    expect(live().get('topic:insp/bash:b')?.detail.shell).toEqual({ state: 'ready', pid, cwd: '~' });
  });

  it('when a shell starts, runs and ends, then the feed shows its actor and transitions, never the command body or the output', async () => {
    const messages: InspectorMessage[] = [];
    const off = watchLiveMessages(t.c.system, messages);
    const c = t.client('insp');
    await c.exec('bash:feed', '/exec true\necho body-secret-41');
    await c.exec('bash:feed', '/exec exit 2');
    off();
    const mine = messages.filter((m) => 'actor' in m && m.actor === 'shell:insp/bash:feed');
    const seen = mine.map((m) => (m.type === 'actor' ? m.event : m.type === 'transition' ? `${String(m.from)}->${String(m.to)}` : ''));
    // XState reports the parent's stopChild before the child's own last snapshot: only `created` has a fixed place.
    expect(seen[0]).toBe('created');
    expect([...seen].sort()).toEqual(['created', 'ready->running', 'running->ended', 'running->ready', 'starting->running', 'stopped']);
    const text = JSON.stringify(messages);
    expect(text).not.toContain('body-secret-41');
    expect(live().has('shell:insp/bash:feed')).toBe(false);
  });
});
