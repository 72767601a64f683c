import { afterEach, describe, expect, it } from '@jest/globals';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

/**
 * Cold start: after a restart, registered agents are dormant (their registry record only)
 * until something touches them; every surface still answers as if they were all in the tree.
 */

const apps: TestApp[] = [];
afterEach(async () => { while (apps.length > 0) await apps.pop()?.close(); });

async function start(dataDir: string): Promise<TestApp> {
  const t = await startApp({ dataDir, memory: false });
  apps.push(t);
  return t;
}

const agentActors = (t: TestApp) => t.c.system.inspection.liveActors(Date.now()).map((a) => a.actor).filter((id) => id.startsWith('agent:'));

/** Register agents (one with a webhook), run a command in one, and restart on the same data directory. */
async function restarted(): Promise<{ t: TestApp; hook: string }> {
  const dataDir = tempDir();
  const first = await start(dataDir);
  const hook = (await call(first.base, 'POST', '/agents', { body: { agent_id: 'ann', webhook: true } })).body.webhook_url as string;
  for (const id of ['bob', 'constructor', 'toString']) expect((await call(first.base, 'POST', '/agents', { body: { agent_id: id } })).status).toBe(200);
  expect((await first.client('bob').exec('main', '/info')).head?.ok).toBe(true);
  await apps.pop()?.close();
  const t = await start(dataDir);
  return { t, hook: hook.replace(/:\d+\//, `:${t.port}/`) };
}

describe('dormant agents after a restart', () => {
  it('when the daemon restarts, then no agent actor is spawned, yet /agents, /health, /sessions and /inspect/state list every agent', async () => {
    const { t } = await restarted();
    expect(agentActors(t)).toEqual([]);
    expect((await call(t.base, 'GET', '/agents')).body.agents.map((a: { id: string }) => a.id)).toEqual(['ann', 'bob', 'constructor', 'toString']);
    expect((await call(t.base, 'GET', '/health')).body).toMatchObject({ agents: 4, sessions: 0 });
    expect((await call(t.base, 'GET', '/sessions')).body.sessions).toEqual([]);
    const state = (await call(t.base, 'GET', '/inspect/state')).body;
    expect(state.agents.map((a: { agent_id: string; topics: unknown[]; installs: unknown[] }) => [a.agent_id, a.topics, a.installs])).toEqual([
      ['ann', [], []], ['bob', [], []], ['constructor', [], []], ['toString', [], []],
    ]);
    expect(state.agents.find((a: { agent_id: string }) => a.agent_id === 'ann').webhook).toBe(true);
    // Reading them spawned nothing.
    expect(agentActors(t)).toEqual([]);
  });

  it('when a command, a webhook post or a delete touches a dormant agent, then that agent (and only it) wakes and behaves as before', async () => {
    const { t, hook } = await restarted();
    const r = await t.client('constructor').exec('main', '/info');
    expect(r.head?.ok).toBe(true);
    expect(agentActors(t)).toEqual(['agent:constructor']);
    expect((await call(t.base, 'GET', '/health')).body).toMatchObject({ agents: 4, sessions: 1 });

    const posted = await fetch(hook, { method: 'POST', body: 'hello after a restart' });
    expect(posted.status).toBe(202);
    // The inbox is the agent's log, not its actor: a post needs no wake; the command that reads it does.
    expect(agentActors(t)).toEqual(['agent:constructor']);
    expect((await t.client('ann').exec('main', '/events')).content).toContain('hello after a restart');
    expect(agentActors(t)).toEqual(['agent:ann', 'agent:constructor']);

    // Deleting a dormant agent goes through its actor like any other: the cascade is the tree.
    const del = await call(t.base, 'DELETE', '/agents/toString');
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ deleted: true, revoked_capabilities: 0, disposed_sessions: 0 });
    expect((await call(t.base, 'GET', '/agents')).body.agents.map((a: { id: string }) => a.id)).toEqual(['ann', 'bob', 'constructor']);
    expect(agentActors(t)).toEqual(['agent:ann', 'agent:constructor']);
  });
});
