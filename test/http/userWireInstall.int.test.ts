import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

/*
 * Packages on the user wire (behaviour.md §11: what the table does not
 * list behaves as the agent wire with "agent" read as "user"): /install, /packages, /uninstall run in
 * the user's topics (no hubs on this wire), the registry lives in <data>/users/<id>/state/ (the two
 * wires never share state), and GET /packages, GET /installs speak X-User-Id and user_id.
 */

let t: TestApp;
let home: string;
beforeAll(async () => {
  t = await startApp({ memory: false, env: { SVC_WIRE: 'user' } });
  home = join(tempDir(), 'ann');
  mkdirSync(join(home, 'apps', 'weather'), { recursive: true });
  writeFileSync(join(home, 'apps', 'weather', 'string.md'), '---\nversion: 0.3.0\n---\n# Weather\n\nSunny.\n');
  expect((await call(t.base, 'POST', '/users', { body: { id: 'ann', home } })).status).toBe(200);
});
afterAll(async () => { await t?.close(); });

/** Run one command as `ann` and return the content without its `re:` line. */
async function run(topic: string, cmd: string): Promise<string> {
  const r = await raw(t.port, { method: 'POST', path: '/exec', headers: { 'Content-Type': 'application/json', 'X-User-Id': 'ann' }, body: JSON.stringify({ cmd, topic }) });
  expect(r.status).toBe(200);
  const data = [...r.body.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]) as unknown);
  const content = data[1] as string;
  return content.slice(content.indexOf('\n') + 1);
}

describe('user wire: packages', () => {
  it('when a user installs a folder from a file: topic, then the package is registered under users/<id>/state, never agents/', async () => {
    expect(await run('file:packages', '/install ~/apps/weather')).toBe('Installed app:weather (local, 1 file) from ~/apps/weather\nnext: /open app:weather');
    const reg = JSON.parse(readFileSync(join(t.dataDir, 'users', 'ann', 'state', 'packages.json'), 'utf8')) as { packages: Record<string, { source: string }> };
    expect(reg.packages.weather.source).toBe('~/apps/weather');
    expect(existsSync(join(t.dataDir, 'agents'))).toBe(false);
  });

  it('when the package is opened in an app: topic, then its document is shown', async () => {
    expect(await run('app:weather', '/open app:weather')).toContain('Sunny.');
  });

  it('GET /packages and GET /installs answer with user_id for X-User-Id', async () => {
    const p = await call(t.base, 'GET', '/packages', { headers: { 'X-User-Id': 'ann' } });
    expect(p.status).toBe(200);
    expect(Object.keys(p.body)).toEqual(['user_id', 'packages']);
    expect(p.body.user_id).toBe('ann');
    expect(p.body.packages.map((x: { name: string }) => x.name)).toEqual(['weather']);
    expect((await call(t.base, 'GET', '/installs', { headers: { 'X-User-Id': 'ann' } })).body).toEqual({ user_id: 'ann', installs: [] });
  });

  it.each([
    [{}, 400, 'X-User-Id header required'],
    [{ 'X-Agent-Id': 'ann' }, 400, 'X-User-Id header required'],
    [{ 'X-User-Id': 'bob' }, 401, 'Unknown user: bob'],
  ])('GET /packages with %j answers %i %s', async (headers, status, error) => {
    for (const path of ['/packages', '/installs']) {
      const r = await call(t.base, 'GET', path, { headers });
      expect(r.status).toBe(status);
      expect(r.body).toEqual({ error });
    }
  });

  it('when the user uninstalls it, then /packages lists nothing and the registry file says so', async () => {
    expect((await run('file:packages', '/uninstall weather')).split('\n')[0]).toMatch(/^Uninstalled app:weather/);
    expect((await run('file:packages', '/packages')).split('\n')[0]).toBe('Packages (0)');
    const reg = JSON.parse(readFileSync(join(t.dataDir, 'users', 'ann', 'state', 'packages.json'), 'utf8')) as { packages: Record<string, unknown> };
    expect(reg.packages).toEqual({});
  });

  it('when the user is deleted, then the user state folder (with the package registry) is gone', async () => {
    expect(await run('file:packages', '/install ~/apps/weather')).toMatch(/^Installed app:weather/);
    expect((await call(t.base, 'DELETE', '/users/ann')).body).toMatchObject({ user_id: 'ann', deleted: true });
    expect(existsSync(join(t.dataDir, 'users', 'ann', 'state'))).toBe(false);
  });
});
