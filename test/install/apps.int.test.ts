import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterRule, startAppsWorld, type AppsWorld } from '../actions/realApps.js';
import { manifest, send, startFileServer, type FileServer } from './support.js';

/**
 * Using installed packages with real corpus apps (test/fixtures/apps): `app:<name>` topics open the
 * package root; local packages run CLI actions in the package folder; linked ones are remote (HTTP
 * actions run, CLI actions are FORBIDDEN); app and config `$NAME` scopes (spec §4.12; behaviour.md
 * §3.1, §3.2, §4.14, §6.3, §7). And the install acceptance test: one corpus app installed three
 * ways, its actions run end to end in its app topic.
 */

let w: AppsWorld;
let srv: FileServer;

/** Every file under a folder as path → content, sorted. */
function files(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const visit = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) visit(p);
      else out.push([relative(dir, p), readFileSync(p, 'utf8')]);
    }
  };
  visit(dir);
  return out.sort(([a], [b]) => (a < b ? -1 : 1));
}

beforeAll(async () => {
  srv = await startFileServer();
  w = await startAppsWorld({ 'gh-kanban': 'apps/apps/gh-kanban', github: 'apps/apps/github', weather: 'apps/apps/weather' });
  w.stub.routes.set('/geocoding-api.open-meteo.com/v1/search', { body: { results: [{ name: 'Seoul', country: 'South Korea', latitude: 37.566, longitude: 126.9784, timezone: 'Asia/Seoul', population: 10349312 }] } });
});
afterAll(async () => {
  await w?.close();
  await srv?.close();
});

describe('a local package in app topics (gh-kanban: default action, ./kanban helper, $OWNER and $PROJECT_NUMBER)', () => {
  it('when a folder is installed, then the helper keeps its executable bit', async () => {
    expect((await w.ok('main', '/install ~/apps/gh-kanban')).split('\n')[0]).toBe('Installed app:gh-kanban (local, 3 files) from ~/apps/gh-kanban');
    expect(statSync(join(w.home, 'packages/gh-kanban/kanban')).mode & 0o111).not.toBe(0);
    // From now on only the package folder holds the helper: ./kanban works only with cwd = package folder.
    rmSync(join(w.home, 'apps/gh-kanban'), { recursive: true });
  });

  it('when the app topic opens without its variables, then ENV_REQUIRED names the app', async () => {
    const r = await w.exec('app:gh-kanban', '/open');
    expect(r.head?.code).toBe('ENV_REQUIRED');
    expect(r.body?.split('\n')[0]).toBe('ERROR(ENV_REQUIRED): Missing required variables for app:gh-kanban: $OWNER, $PROJECT_NUMBER');
  });

  it('when $NAMEs are set in the app topic, then they go to the app scope and the default board runs in the package folder', async () => {
    expect(await w.ok('app:gh-kanban', '/set $OWNER = "octo"')).toBe('$OWNER set (app gh-kanban)');
    expect(await w.ok('app:gh-kanban', '/set $PROJECT_NUMBER = "5"')).toBe('$PROJECT_NUMBER set (app gh-kanban)');
    w.calls();
    const body = await w.ok('app:gh-kanban', '/open');
    expect(body.split('\n')[0]).toBe('Opened app:gh-kanban (~/packages/gh-kanban/string.md)');
    expect(afterRule(body).split('\n')[0]).toBe('# GitHub Kanban — octo / Project 5');
    expect(w.calls()).toEqual([['kanban', 'board', 'octo', '5', 'all', '50']]);
  });

  it('when a config topic sets $OWNER, then the config scope wins there and the app scope fills the rest', async () => {
    expect(await w.ok('app:gh-kanban:work', '/set $OWNER = "acme"')).toBe('$OWNER set (config gh-kanban:work)');
    expect(afterRule(await w.ok('app:gh-kanban:work', '/open')).split('\n')[0]).toBe('# GitHub Kanban — acme / Project 5');
    expect(afterRule(await w.ok('app:gh-kanban', '/refresh')).split('\n')[0]).toBe('# GitHub Kanban — octo / Project 5');
    const info = await w.ok('app:gh-kanban:work', '/info');
    expect(info).toContain('type:      app (package gh-kanban, config work)');
    expect(info).toContain('origin:    local — CLI actions allowed');
    expect(info).toContain('base:      ~/packages/gh-kanban');
  });

  it('when a tab topic opens the package, then $NAME comes from the tab topic scope (global)', async () => {
    expect((await w.exec('tabk', '/open app:gh-kanban')).head?.code).toBe('ENV_REQUIRED');
    await w.ok('tabk', '/set $OWNER = "solo"');
    await w.ok('tabk', '/set $PROJECT_NUMBER = "9"');
    expect(afterRule(await w.ok('tabk', '/open app:gh-kanban')).split('\n')[0]).toBe('# GitHub Kanban — solo / Project 9');
  });

  it('when the app hub is opened, then it lists the package and the open app topics', async () => {
    const hub = await w.ok('app', '/open');
    expect(hub).toContain('Installed apps (1)\n  gh-kanban  local  0.1.0  ~/apps/gh-kanban');
    expect(hub).toContain('  app:gh-kanban:work  app:gh-kanban');
  });
});

describe('linked packages are remote (spec §4.13 item 6, behaviour.md §4.14)', () => {
  it('when a linked app declares CLI actions, then they are FORBIDDEN and nothing runs', async () => {
    srv.routes.set('/gh/manifest.json', send(manifest([{ path: 'string.md', content: readFileSync(join(w.home, 'apps/github/string.md'), 'utf8') }], { delivery: 'link' })));
    expect((await w.ok('main', `/install ${srv.url('/gh/manifest.json')} --as ghlink`)).split('\n')[0]).toBe(`Linked app:ghlink → ${srv.url('/gh/manifest.json')} (fetched on every open)`);
    w.calls();
    const r = await w.exec('app:ghlink', '/act.my_issues');
    expect(r.body).toBe('ERROR(FORBIDDEN): CLI actions run only from local documents; app:ghlink is a linked package');
    expect(w.calls()).toEqual([]);
    expect(await w.ok('app:ghlink', '/info')).toContain('origin:    linked package — HTTP actions only');
  });

  it('when a linked app declares HTTP actions, then they run', async () => {
    srv.routes.set('/weather/manifest.json', send(manifest([{ path: 'string.md', url: srv.url('/weather/string.md') }], { delivery: 'link' })));
    srv.routes.set('/weather/string.md', send(readFileSync(join(w.home, 'apps/weather/string.md'), 'utf8')));
    expect((await w.ok('main', `/install ${srv.url('/weather/manifest.json')}`)).split('\n')[0]).toBe(`Linked app:weather → ${srv.url('/weather/manifest.json')} (fetched on every open)`);
    expect((await w.ok('app:weather', '/act.find_city Seoul')).split('\n')[0]).toBe('## Seoul, South Korea');
  });
});

describe('acceptance: the github corpus app installed three ways runs end to end in its app topic', () => {
  const src = () => join(w.home, 'apps/github');
  const ways: Array<[string, () => Promise<string>]> = [
    ['a folder', async () => '~/apps/github'],
    ['a manifest with inline content', async () => {
      srv.routes.set('/inline/manifest.json', send(manifest(files(src()).map(([path, content]) => ({ path, content })))));
      return srv.url('/inline/manifest.json');
    }],
    ['a manifest with file URLs on a loopback server', async () => {
      for (const [p, text] of files(src())) srv.routes.set(`/files/${p}`, send(text));
      srv.routes.set('/files/manifest.json', send(manifest(files(src()).map(([path]) => ({ path, url: srv.url(`/files/${path}`) })))));
      return srv.url('/files/manifest.json');
    }],
  ];

  it.each(ways.map(([how, source], i) => [how, source, `gh${i + 1}`] as const))('when installed from %s, then menus, pages and CLI actions work in app:<name>', async (_how, source, name) => {
    const from = await source();
    expect((await w.ok('main', `/install ${from} --as ${name}`)).split('\n')[0]).toBe(`Installed app:${name} (local, 7 files) from ${from}`);
    expect(files(join(w.home, 'packages', name))).toEqual(files(src()));
    const topic = `app:${name}`;
    const root = await w.ok(topic, '/open');
    expect(root.split('\n')[0]).toBe(`Opened app:${name} (~/packages/${name}/string.md)`);
    expect(root).toContain('[nav] main (6) — /nav main');
    expect(root).toContain('[actions] my_issues, my_prs, notifications');
    w.calls();
    expect(await w.ok(topic, '/act.my_issues')).toBe('### octo/app#7: Crash on start\n- **Updated:** 2025-06-01T10:00:00Z');
    expect(w.calls()[0].slice(0, 4)).toEqual(['gh', 'search', 'issues', '--assignee']);
    expect((await w.ok(topic, '/open @main.issues')).split('\n')[0]).toBe(`Opened app:${name}/issues.md (~/packages/${name}/issues.md)`);
    const list = await w.ok(topic, '/act.list_issues octo/app');
    expect(list.split('\n')[0]).toBe('### #7: Crash on start');
    expect(w.calls()[0].slice(0, 5)).toEqual(['gh', 'issue', 'list', '--repo', 'octo/app']);
    expect((await w.ok(topic, '/back')).split('\n')[0]).toBe(`Back to app:${name}`);
  });
});
