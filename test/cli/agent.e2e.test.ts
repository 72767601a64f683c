import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { loom } from './support.js';

let d: RunningDaemon;
beforeAll(async () => { d = await startDaemon(); });
afterAll(async () => { await d?.kill(); });

describe('behaviour.md §2.13 loom agent add|list|rm', () => {
  it('when an agent is added, then its home is printed and created', async () => {
    const r = await loom(d, ['agent', 'add', 'leo']);
    const home = join(d.dataDir, 'agents', 'leo', 'home');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Added agent 'leo' · home ${home}\n`);
    expect(statSync(home).isDirectory()).toBe(true);
  });

  it('when the same agent is added again, then it succeeds and keeps its home (idempotent)', async () => {
    const r = await loom(d, ['agent', 'add', 'leo']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Updated agent 'leo' · home ${join(d.dataDir, 'agents', 'leo', 'home')}\n`);
  });

  it('when --home and --allow are given, then the registry keeps them', async () => {
    // A home may not lie inside the data directory (behaviour.md §1.4).
    const home = join(tempDir(), 'custom-home');
    const r = await loom(d, ['agent', 'add', 'mia', '--home', home, '--allow', '/srv/shared']);
    expect(r.stdout).toBe(`Added agent 'mia' · home ${home}\n`);
    expect(statSync(home).isDirectory()).toBe(true);
    const agents = (await new LoomClient(d.base).listAgents()).body.agents;
    expect(agents.find((a) => a.id === 'mia')).toMatchObject({ home, allowedPaths: ['/srv/shared'] });
  });

  it('when --json is given to add, then the POST /agents answer is printed', async () => {
    const r = await loom(d, ['--json', 'agent', 'add', 'leo']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ agent_id: 'leo', home: join(d.dataDir, 'agents', 'leo', 'home'), created: false });
  });

  it('when the id is invalid, then the daemon refusal is on stderr and the exit code is 1', async () => {
    const r = await loom(d, ['agent', 'add', '-bad']);
    expect(r.code).not.toBe(0);
    const dots = await loom(d, ['agent', 'add', '..']);
    expect(dots).toEqual({ code: 1, stdout: '', stderr: 'loom: Invalid agent_id: ..\n' });
    const j = await loom(d, ['--json', 'agent', 'add', '..']);
    expect(JSON.parse(j.stderr)).toEqual({ error: 'Invalid agent_id: ..', code: 'HTTP_400' });
  });

  it('when agents are listed, then each id and home is shown', async () => {
    const r = await loom(d, ['agent', 'list']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('Agents (2)');
    // Aligned columns: id, home, allowed paths.
    const mia = (await new LoomClient(d.base).listAgents()).body.agents.find((a) => a.id === 'mia')?.home ?? '';
    const leoHome = join(d.dataDir, 'agents', 'leo', 'home');
    const width = Math.max(leoHome.length, mia.length);
    expect(lines).toContain(`  leo  ${leoHome}`);
    expect(lines).toContain(`  mia  ${mia.padEnd(width)}  + /srv/shared`);
    const json = JSON.parse((await loom(d, ['agent', 'list', '--json'])).stdout) as { agents: Array<{ id: string }> };
    expect(json.agents.map((a) => a.id).sort()).toEqual(['leo', 'mia']);
  });

  it('when an agent is removed, then it is gone, its sessions disposed and its home kept', async () => {
    expect((await loom(d, ['--agent', 'leo', 'main', '/info'])).code).toBe(0);
    expect((await loom(d, ['--agent', 'leo', 'agent', 'capability', 'mint', '--verbs', 'get', '--ttl', '1h'])).code).toBe(0);
    const r = await loom(d, ['agent', 'rm', 'leo']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Deleted agent 'leo' (revoked 1 capability, disposed 1 session; home kept)\n");
    expect(existsSync(join(d.dataDir, 'agents', 'leo', 'home'))).toBe(true);
    expect((await loom(d, ['agent', 'list'])).stdout.split('\n')[0]).toBe('Agents (1)');
  });

  it('when the agent does not exist, then rm says so on stderr and exits 1', async () => {
    expect(await loom(d, ['agent', 'rm', 'ghost'])).toEqual({ code: 1, stdout: '', stderr: "loom: no agent 'ghost'; loom agent list shows the agents\n" });
  });

  it('when use names an id that can never exist, then it says invalid and saves nothing', async () => {
    expect(await loom(d, ['agent', 'use', 'a b'])).toMatchObject({ code: 1, stderr: "loom: invalid agent id 'a b'; use 1–64 letters, digits, \".\", \"_\" or \"-\", starting with a letter or digit\n" });
    expect(existsSync(join(d.dataDir, 'cli.json'))).toBe(false);
  });
});
