import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { alive, Daemons, json } from './support.js';

/**
 * A home or allowed path that is, contains or lies inside the data
 * directory would put agents.json (every webhook token), capability hashes and env stores in reach
 * of /fs and file commands, so POST /agents refuses it; a home that cannot be a folder is a 400
 * too, never a 500. A refused registration changes nothing, in memory or on disk.
 */

const daemons = new Daemons();
let d: RunningDaemon;
let data = '';

beforeAll(async () => {
  d = await daemons.start();
  data = d.dataDir;
  expect((await json(d.base, 'POST', '/agents', { agent_id: 'keep' })).status).toBe(200);
});
afterAll(() => daemons.killAll());

/** POST /agents must answer exactly this 400 and leave registry and disk as they were. */
async function refused(body: Record<string, unknown>, error: string, message: string): Promise<void> {
  const before = readFileSync(join(data, 'agents.json'), 'utf8');
  const r = await json(d.base, 'POST', '/agents', body);
  expect(r).toEqual({ status: 400, body: { error, message } });
  expect(readFileSync(join(data, 'agents.json'), 'utf8')).toBe(before);
  expect(((await json(d.base, 'GET', '/agents')).body.agents as Array<{ id: string }>).map((a) => a.id)).toEqual(['keep']);
  expect((await json(d.base, 'GET', '/health')).body.agents).toBe(1);
}

describe('homes and allowed paths never overlap the data directory', () => {
  it('when the home is the data directory, then 400 Invalid home', async () => {
    await refused({ agent_id: 'hm', home: data }, 'Invalid home', `${data} is the Loom data directory`);
  });

  it('when the home is inside the data directory (state folders, another agent\'s default home), then 400 Invalid home', async () => {
    for (const inside of [join(data, 'agents'), join(data, 'agents', 'keep', 'state'), join(data, 'agents', 'keep', 'home'), join(data, 'agents', 'hm')]) {
      await refused({ agent_id: 'hm', home: inside }, 'Invalid home', `${inside} is inside the Loom data directory ${data}`);
    }
  });

  it('when the home contains the data directory, then 400 Invalid home', async () => {
    await refused({ agent_id: 'hm', home: dirname(data) }, 'Invalid home', `${dirname(data)} contains the Loom data directory ${data}`);
  });

  it('when the home reaches the data directory through a symlink, then 400 Invalid home', async () => {
    const link = join(tempDir(), 'to-data');
    symlinkSync(data, link);
    await refused({ agent_id: 'hm', home: link }, 'Invalid home', `${link} is the Loom data directory`);
    await refused({ agent_id: 'hm', home: join(link, 'agents', 'x') }, 'Invalid home', `${join(link, 'agents', 'x')} is inside the Loom data directory ${data}`);
  });

  it('when an allowed path overlaps the data directory, then 400 Invalid allowed_paths', async () => {
    const ok = tempDir();
    await refused({ agent_id: 'hm', allowed_paths: [ok, data] }, 'Invalid allowed_paths', `${data} is the Loom data directory`);
    await refused({ agent_id: 'hm', allowed_paths: ['/'] }, 'Invalid allowed_paths', `/ contains the Loom data directory ${data}`);
    await refused({ agent_id: 'hm', allowed_paths: [join(data, 'agents.json')] }, 'Invalid allowed_paths', `${join(data, 'agents.json')} is inside the Loom data directory ${data}`);
  });

  it('when an existing agent is updated to such a home, then nothing changes', async () => {
    const before = (await json(d.base, 'GET', '/agents')).body;
    const r = await json(d.base, 'POST', '/agents', { agent_id: 'keep', home: data });
    expect(r).toEqual({ status: 400, body: { error: 'Invalid home', message: `${data} is the Loom data directory` } });
    expect((await json(d.base, 'GET', '/agents')).body).toEqual(before);
  });

  it('when the home is the agent\'s own default home (or a folder in it), then it is accepted', async () => {
    const own = join(data, 'agents', 'own', 'home');
    expect((await json(d.base, 'POST', '/agents', { agent_id: 'own', home: own })).body).toEqual({ agent_id: 'own', home: own, created: true });
    expect((await json(d.base, 'POST', '/agents', { agent_id: 'own', home: join(own, 'sub') })).body).toMatchObject({ home: join(own, 'sub'), created: false });
    expect((await json(d.base, 'DELETE', '/agents/own')).status).toBe(200);
  });
});

describe('homes that cannot be folders are 400, not 500', () => {
  it.each([
    ['/dev/null', '/dev/null is not a directory'],
    ['/dev/null/x', '/dev/null is not a directory'],
  ])('when the home is %s, then 400 Invalid home: %s', async (home, message) => {
    await refused({ agent_id: 'hm', home }, 'Invalid home', message);
  });

  it('when the home has a 5,000-byte path or a 300-byte name, then 400 Invalid home', async () => {
    const long = `/tmp/${'b'.repeat(5000)}`;
    await refused({ agent_id: 'hm', home: long }, 'Invalid home', `Path too long: ${long}`);
    const deep = `/tmp/${'abcdefghi/'.repeat(420)}`.replace(/\/$/, '');
    await refused({ agent_id: 'hm', home: deep }, 'Invalid home', `Path too long: ${deep}`);
    const name = join(tempDir(), 'c'.repeat(300));
    await refused({ agent_id: 'hm', home: name }, 'Invalid home', `Name too long: ${name}`);
    expect(existsSync(name)).toBe(false);
  });

  it('when the home\'s folder cannot be created (no permission), then 400 Invalid home', async () => {
    // procfs refuses new folders: EACCES for a user, ENOENT even for root (where Node's recursive
    // mkdir used to spin for ever and hang the daemon).
    const r = await json(d.base, 'POST', '/agents', { agent_id: 'hm', home: '/proc/loom-home' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Invalid home');
    expect(String(r.body.message)).toMatch(/^Cannot create \/proc\/loom-home: (permission denied|no such file or directory)$/);
    expect((await json(d.base, 'GET', '/health')).body.agents).toBe(1);
  });

  it('after every refusal the daemon is up', async () => {
    expect(await alive(d)).toBe(true);
  });
});
