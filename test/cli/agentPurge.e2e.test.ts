import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { loom } from './support.js';

/** behaviour.md §17: `loom agent rm <id> --purge` (DELETE /agents/{id}?purge=1[&force=1]). */
describe('loom agent rm --purge', () => {
  const dir = tempDir('loom-purge-');
  // The daemon's HOME: a home that holds it is never purged.
  const userHome = join(dir, 'user', 'home');
  let d: RunningDaemon;
  beforeAll(async () => {
    mkdirSync(userHome, { recursive: true });
    d = await startDaemon({ dataDir: join(dir, 'data'), env: { HOME: userHome } });
  });
  afterAll(async () => {
    await d?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('deletes the default home with everything in it, and the agent folder of the data directory', async () => {
    await loom(d, ['agent', 'add', 'leo']);
    const home = join(d.dataDir, 'agents', 'leo', 'home');
    writeFileSync(join(home, 'notes.md'), 'x');
    const r = await loom(d, ['agent', 'rm', 'leo', '--purge']);
    expect(r).toEqual({ code: 0, stdout: `Deleted agent 'leo' (revoked 0 capabilities, disposed 0 sessions; home ${home} deleted)\n`, stderr: '' });
    expect(existsSync(join(d.dataDir, 'agents', 'leo'))).toBe(false);
  });

  it('without --purge the home stays', async () => {
    await loom(d, ['agent', 'add', 'kai']);
    const r = await loom(d, ['agent', 'rm', 'kai']);
    expect(r.stdout).toBe("Deleted agent 'kai' (revoked 0 capabilities, disposed 0 sessions; home kept)\n");
    expect(existsSync(join(d.dataDir, 'agents', 'kai', 'home'))).toBe(true);
  });

  it('refuses a home the user chose without --force and deletes nothing; with --force it goes', async () => {
    const home = join(dir, 'ann-home');
    await loom(d, ['agent', 'add', 'ann', '--home', home]);
    const refused = await loom(d, ['agent', 'rm', 'ann', '--purge']);
    expect(refused).toEqual({ code: 1, stdout: '', stderr: `loom: Home was chosen at registration; ${home} is not the agent's default home; to delete it as well add force=1 (loom agent rm ann --purge --force)\n` });
    expect(existsSync(home)).toBe(true);
    expect((await new LoomClient(d.base).listAgents()).body.agents.map((a) => a.id)).toContain('ann');
    const r = await loom(d, ['--json', 'agent', 'rm', 'ann', '--purge', '--force']);
    expect(JSON.parse(r.stdout)).toEqual({ agent_id: 'ann', deleted: true, revoked_capabilities: 0, disposed_sessions: 0, purged_home: home });
    expect(existsSync(home)).toBe(false);
  });

  it('never purges a home that is or holds the user home folder, even with --force', async () => {
    const home = join(dir, 'user');
    await loom(d, ['agent', 'add', 'bob', '--home', home]);
    const r = await loom(d, ['agent', 'rm', 'bob', '--purge', '--force']);
    expect(r).toEqual({ code: 1, stdout: '', stderr: `loom: Home cannot be purged; ${home} is / or holds the user's home folder; delete the agent without purge\n` });
    expect(existsSync(userHome)).toBe(true);
  });

  it('--force without --purge is a usage error; a bad purge value is a 400 that names it', async () => {
    expect(await loom(d, ['agent', 'rm', 'bob', '--force'])).toEqual({ code: 2, stdout: '', stderr: 'loom: --force only applies with --purge\n' });
    const res = await fetch(`${d.base}/agents/bob?purge=yes`, { method: 'DELETE' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'Invalid purge', message: 'use purge=1 or purge=0' });
    expect((await new LoomClient(d.base).listAgents()).body.agents.map((a) => a.id)).toContain('bob');
  });

  it('an unknown agent with --purge: no agent, nothing deleted', async () => {
    expect(await loom(d, ['agent', 'rm', 'nobody', '--purge'])).toEqual({ code: 1, stdout: '', stderr: "loom: no agent 'nobody'; loom agent list shows the agents\n" });
  });
});
