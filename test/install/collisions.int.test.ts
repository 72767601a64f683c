import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { GITHUB_MAX_API_REQUESTS } from '../../src/domain/limits.js';
import { hidePrivatePaths } from '../../src/effects/install/errorText.js';
import { pathCollision } from '../../src/sfmd/manifest.js';
import { installBench, leftovers, send, startFileServer, type FileServer, type InstallBench } from './support.js';

/**
 * Package paths that cannot all be files are refused before anything is fetched (behaviour.md
 * §7.4), for manifests and GitHub listings alike; GitHub folder names are checked like file names
 * and one install makes at most GITHUB_MAX_API_REQUESTS API requests (§7.3); no error text names an
 * absolute path inside the data directory.
 */
let b: InstallBench;
let srv: FileServer;
const errors: string[] = [];

beforeAll(async () => {
  srv = await startFileServer();
  b = await installBench('leo', { SVC_GITHUB_API: `${srv.origin}/api` });
});
afterAll(async () => {
  await b?.close();
  await srv?.close();
  if (b) rmSync(b.t.dataDir, { recursive: true, force: true });
});

/** Run a command and keep its text for the scan of error texts at the end. */
async function run(cmd: string): Promise<string> {
  const r = await b.run('main', cmd);
  errors.push(r.body);
  return r.body;
}

/** A GitHub contents entry served by the fake API. */
const file = (path: string) => ({ type: 'file', name: path.split('/').pop(), path, size: 2, download_url: srv.url(`/raw/${path}`) });
const dir = (path: string, name = path.split('/').pop()) => ({ type: 'dir', name, path, size: 0, download_url: null });
/** Serve one repository's listings (folder path → entries) under /api/repos/acme/<repo>/contents. */
function repo(name: string, folders: Record<string, object[]>): void {
  for (const [folder, entries] of Object.entries(folders)) srv.routes.set(`/api/repos/acme/${name}/contents${folder ? `/${folder}` : ''}`, send(entries));
}
const fetched = () => srv.paths().filter((p) => p.startsWith('/raw/') || p.startsWith('/files/'));

describe('path collisions (behaviour.md §7.4)', () => {
  it('pathCollision names the pair, shorter first, in either order, and duplicates', () => {
    expect(pathCollision(['string.md', 'a', 'a/b.md'])).toBe('path collision: a and a/b.md');
    expect(pathCollision(['string.md', 'a/b/c.md', 'a/b'])).toBe('path collision: a/b and a/b/c.md');
    expect(pathCollision(['string.md', 'x.md', 'x.md'])).toBe('path collision: x.md is listed twice');
    expect(pathCollision(['string.md', 'ab', 'a/b', 'a.b/c'])).toBeNull();
  });

  it.each([[['a', 'a/b.md']], [['a/b.md', 'a']]])('when a manifest lists %j, then INSTALL_FAILED path collision before any file is fetched', async (paths) => {
    const before = fetched().length;
    const m = { files: [{ path: 'string.md', content: '# M\n' }, ...paths.map((p) => ({ path: p, url: srv.url(`/files/${p}`) }))] };
    srv.routes.set('/m.json', send(m));
    expect(await run(`/install ${srv.url('/m.json')} --as coll`)).toBe('ERROR(INSTALL_FAILED): path collision: a and a/b.md');
    expect(fetched().length).toBe(before);
    expect(leftovers(b.home)).toEqual([]);
  });

  it('when a GitHub listing holds a name twice, or a file and a folder of one name, then INSTALL_FAILED before any download', async () => {
    repo('dup', { '': [file('string.md'), file('x.md'), file('x.md')] });
    repo('mixed', { '': [file('string.md'), file('a'), dir('a')], a: [file('a/b.md')] });
    repo('dupdir', { '': [file('string.md'), dir('d'), dir('d')], d: [file('d/c.md')] });
    expect(await run('/install gh:acme/dup@main')).toBe('ERROR(INSTALL_FAILED): path collision: x.md is listed twice');
    expect(await run('/install gh:acme/mixed@main')).toBe('ERROR(INSTALL_FAILED): path collision: a and a/b.md');
    expect(await run('/install gh:acme/dupdir@main')).toBe('ERROR(INSTALL_FAILED): path collision: d/c.md is listed twice');
    expect(fetched()).toEqual([]);
    expect(leftovers(b.home)).toEqual([]);
  });
});

describe('GitHub folder names and the API request cap (behaviour.md §7.3)', () => {
  it.each([
    ['../../../../admin', 'GitHub: path "../../../../admin" contains ".."'],
    ['..', 'GitHub: path ".." contains ".."'],
    ['.', 'GitHub: path "." has an empty or "." segment'],
    ['a/../../x', 'GitHub: path "a/../../x" contains ".."'],
    ['sub/dir', 'GitHub: path "sub/dir" has a "/" inside a name'],
    ['', 'GitHub: an entry in the package root has no name'],
  ])('when a folder is named %j, then INSTALL_FAILED and no request leaves the repository contents', async (name, message) => {
    const key = `bad${errors.length}`;
    repo(key, { '': [file('string.md'), dir('x', name)] });
    const before = srv.requests.length;
    expect(await run(`/install gh:acme/${key}@main`)).toBe(`ERROR(INSTALL_FAILED): ${message}`);
    expect(srv.requests.slice(before).map((r) => r.path)).toEqual([`/api/repos/acme/${key}/contents`]);
  });

  it(`when a repository has more folders than ${GITHUB_MAX_API_REQUESTS} requests can list, then INSTALL_FAILED at the cap`, async () => {
    const folders: Record<string, object[]> = { '': [file('string.md'), ...Array.from({ length: 300 }, (_, i) => dir(`f${i}`))] };
    for (let i = 0; i < 300; i++) folders[`f${i}`] = [{ type: 'symlink', name: 'l', path: `f${i}/l`, size: 0, download_url: null }];
    repo('many', folders);
    srv.routes.set('/api/repos/acme/many', send({ default_branch: 'main' }));
    const before = srv.requests.length;
    expect(await run('/install gh:acme/many')).toBe(`ERROR(INSTALL_FAILED): GitHub: acme/many needs more than ${GITHUB_MAX_API_REQUESTS} API requests (one per folder); install a smaller folder`);
    expect(srv.requests.length - before).toBe(GITHUB_MAX_API_REQUESTS);
  });
});

describe('error texts and the data directory', () => {
  it('hidePrivatePaths shows the home as ~ and the data directory as <data>, whole segments only', () => {
    const data = join(b.t.dataDir);
    expect(hidePrivatePaths(`EEXIST: '${b.home}/packages/.staging-x-1/a'`, b.home, data)).toBe("EEXIST: '~/packages/.staging-x-1/a'");
    expect(hidePrivatePaths(`open '${data}/agents/leo/state/packages.json'`, b.home, data)).toBe("open '<data>/agents/leo/state/packages.json'");
    expect(hidePrivatePaths(`${b.home}2/x`, b.home, data)).toBe(`<data>/agents/leo/home2/x`);
  });

  it('no error text of this suite names an absolute path inside the data directory', () => {
    expect(b.home.startsWith(b.t.dataDir)).toBe(true);
    expect(errors.length).toBeGreaterThan(10);
    expect(errors.filter((e) => e.includes(b.t.dataDir))).toEqual([]);
  });
});
