import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VERSION } from '../../src/version.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hashTree, installBench, leftovers, send, startFileServer, type FileServer, type InstallBench } from './support.js';

/**
 * GitHub sources (behaviour.md §7.3) against a fake GitHub REST API on 127.0.0.1 (SVC_GITHUB_API):
 * default branch, recursive contents, skipped symlinks and submodules, blob and tree URLs, the
 * error texts, and where a token may go.
 */

let b: InstallBench;
let api: FileServer;
let cdn: FileServer;

/** A repository as the fake API serves it: path → content; `special` adds symlink/submodule entries. */
interface FakeRepo {
  files: Record<string, string>;
  special?: Array<{ path: string; type: 'symlink' | 'submodule' }>;
  /** Serve downloads from this server instead of the API's origin. */
  downloads?: FileServer;
}
const repos = new Map<string, FakeRepo>();

function listing(repoKey: string, repo: FakeRepo, dir: string, ref: string): object | null {
  const prefix = dir ? `${dir}/` : '';
  const host = repo.downloads ?? api;
  const seen = new Map<string, Record<string, unknown>>();
  for (const [p, text] of Object.entries(repo.files)) {
    if (!p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    const name = rest.split('/')[0];
    if (rest.includes('/')) seen.set(name, { type: 'dir', name, path: prefix + name, size: 0, download_url: null });
    else seen.set(name, { type: 'file', name, path: p, size: Buffer.byteLength(text), download_url: host.url(`/raw/${repoKey}/${ref}/${p}`) });
  }
  for (const s of repo.special ?? []) if (s.path.startsWith(prefix) && !s.path.slice(prefix.length).includes('/')) {
    seen.set(s.path.slice(prefix.length), { type: s.type, name: s.path.slice(prefix.length), path: s.path, size: 0, download_url: null });
  }
  if (seen.size === 0 && dir && repo.files[dir] !== undefined) {
    return { type: 'file', name: dir.split('/').pop(), path: dir, size: Buffer.byteLength(repo.files[dir]), download_url: host.url(`/raw/${repoKey}/${ref}/${dir}`) };
  }
  return seen.size === 0 ? null : [...seen.values()];
}

function installApi(): void {
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '', api.origin);
    const m = /^\/repos\/([^/]+)\/([^/]+)(?:\/contents(?:\/(.*))?)?$/.exec(url.pathname);
    const rawM = /^\/raw\/([^/]+\/[^/]+)\/([^/]+(?:%2F[^/]+)?)\/(.*)$/.exec(url.pathname);
    if (rawM) {
      const repo = repos.get(rawM[1]);
      const text = repo?.files[decodeURIComponent(rawM[3])];
      return typeof text !== 'string' ? send('nope', { status: 404, type: 'text/plain' })(req, res) : send(text)(req, res);
    }
    if (!m) return send({ message: 'Not Found' }, { status: 404 })(req, res);
    const key = `${m[1]}/${m[2]}`;
    const repo = repos.get(key);
    if (key === 'acme/limited') return send({ message: 'API rate limit exceeded' }, { status: 403, headers: { 'x-ratelimit-remaining': '0' } })(req, res);
    if (key === 'acme/private') return send({ message: 'Bad credentials' }, { status: 401 })(req, res);
    if (key === 'acme/busy') return send({ message: 'slow down' }, { status: 429 })(req, res);
    if (!repo) return send({ message: 'Not Found' }, { status: 404 })(req, res);
    if (!url.pathname.includes('/contents')) return send({ full_name: key, default_branch: 'trunk' })(req, res);
    const ref = url.searchParams.get('ref') ?? '';
    const body = listing(key, repo, decodeURIComponent(m[3] ?? ''), encodeURIComponent(ref));
    return body === null || body === undefined ? send({ message: 'Not Found' }, { status: 404 })(req, res) : send(body)(req, res);
  };
  api.fallback = handler;
  cdn.fallback = handler;
}

beforeAll(async () => {
  api = await startFileServer();
  cdn = await startFileServer();
  installApi();
  b = await installBench('leo', { SVC_GITHUB_API: api.origin });
  repos.set('acme/loom-apps', {
    files: { 'weather/string.md': '---\nversion: 1.2.0\n---\n# Weather\n', 'weather/pages/more.md': '# More\n', 'weather/data/cities.json': '{"seoul":1}', 'README.md': '# apps\n', 'empty/a.md': 'a', 'empty/b.md': 'b', 'empty/docs/c.md': 'c' },
    special: [{ path: 'weather/latest', type: 'symlink' }, { path: 'weather/vendor', type: 'submodule' }],
  });
  repos.set('acme/weather-app', { files: { 'string.md': '# Root app\n', 'icons/sun.svg': '<svg/>' } });
  const deep: Record<string, string> = { 'string.md': '# Deep\n' };
  deep[`${Array.from({ length: 9 }, (_, i) => `d${i + 1}`).join('/')}/x.md`] = 'deep';
  repos.set('acme/deep', { files: deep });
  repos.set('acme/slashy', { files: { 'string.md': '# S\n', 'a\\b.md': 'x' } });
  repos.set('acme/elsewhere', { files: { 'string.md': '# Elsewhere\n', 'more.md': '# More\n' }, downloads: cdn });
});
afterAll(async () => {
  await b?.close();
  await api?.close();
  await cdn?.close();
});
beforeEach(() => {
  api.requests.length = 0;
  cdn.requests.length = 0;
});

describe('GitHub folders (behaviour.md §7.3)', () => {
  it('when gh:<o>/<r>/<path> has no ref, then the default branch is used, the tree is fetched, symlinks and submodules are skipped', async () => {
    const r = await b.run('main', '/install gh:acme/loom-apps/weather');
    expect(r.body).toBe('Installed app:weather (local, 3 files) from gh:acme/loom-apps/weather@trunk\nnext: /open app:weather');
    const pkg = join(b.home, 'packages/weather');
    expect(readFileSync(join(pkg, 'pages/more.md'), 'utf8')).toBe('# More\n');
    expect(readFileSync(join(pkg, 'data/cities.json'), 'utf8')).toBe('{"seoul":1}');
    const apiCalls = api.requests.filter((q) => q.path.startsWith('/repos/'));
    expect(apiCalls.map((q) => (q.query ? `${q.path}?${q.query}` : q.path)).sort()).toEqual([
      '/repos/acme/loom-apps', '/repos/acme/loom-apps/contents/weather/data?ref=trunk',
      '/repos/acme/loom-apps/contents/weather/pages?ref=trunk', '/repos/acme/loom-apps/contents/weather?ref=trunk',
    ]);
    for (const q of apiCalls) {
      expect(q.headers.accept).toBe('application/vnd.github+json');
      expect(q.headers['x-github-api-version']).toBe('2022-11-28');
      expect(q.headers['user-agent']).toBe(`loom/${VERSION}`);
      expect(q.headers.authorization).toBeUndefined();
    }
  });

  it('when a ref holds a slash (gh:…@feature/x), then it is passed as given and no default-branch lookup happens', async () => {
    const r = await b.run('main', '/install gh:acme/loom-apps/weather@feature/x --as wx');
    expect(r.body.split('\n')[0]).toBe('Installed app:wx (local, 3 files) from gh:acme/loom-apps/weather@feature/x');
    expect(api.requests[0].path).toBe('/repos/acme/loom-apps/contents/weather');
    expect(api.requests[0].query).toBe('ref=feature%2Fx');
  });

  it('when a github.com tree URL is given, then its ref and path are used', async () => {
    const r = await b.run('main', '/install https://github.com/acme/loom-apps/tree/v2/weather --as wt');
    expect(r.body.split('\n')[0]).toBe('Installed app:wt (local, 3 files) from gh:acme/loom-apps/weather@v2');
  });

  it('when a repository URL is given, then the repository root is the package, named after the repo', async () => {
    const r = await b.run('main', '/install https://github.com/acme/weather-app');
    expect(r.body.split('\n')[0]).toBe('Installed app:weather-app (local, 2 files) from gh:acme/weather-app@trunk');
  });

  it('when a blob URL is given, then one file is installed as string.md', async () => {
    const r = await b.run('main', '/install https://github.com/acme/loom-apps/blob/main/weather/pages/more.md');
    expect(r.body.split('\n')[0]).toBe('Installed app:more (local, 1 file) from gh:acme/loom-apps/weather/pages/more.md@main');
    expect(readFileSync(join(b.home, 'packages/more/string.md'), 'utf8')).toBe('# More\n');
  });
});

describe('GitHub failures (behaviour.md §7.3) change nothing', () => {
  let before: string;
  beforeAll(() => { before = hashTree(join(b.home, 'packages/weather')); });
  const untouched = () => {
    expect(hashTree(join(b.home, 'packages/weather'))).toBe(before);
    expect(leftovers(b.home)).toEqual([]);
  };

  it.each([
    ['gh:acme/loom-apps/empty@main', 'No string.md in gh:acme/loom-apps/empty@main (found: a.md, b.md, docs)'],
    ['gh:acme/loom-apps/nope@main', 'GitHub: not found: acme/loom-apps/nope@main'],
    ['gh:acme/missing', 'GitHub: not found: acme/missing'],
    ['gh:acme/limited/weather', 'GitHub API refused the request (HTTP 403); set $GITHUB_TOKEN if rate-limited'],
    ['gh:acme/private', 'GitHub API refused the request (HTTP 401); set $GITHUB_TOKEN if rate-limited'],
    ['gh:acme/busy@main', 'GitHub API refused the request (HTTP 429); set $GITHUB_TOKEN if rate-limited'],
    ['gh:acme/deep@main', 'gh:acme/deep@main is nested deeper than 8 folders (d1/d2/d3/d4/d5/d6/d7/d8/d9)'],
    ['gh:acme/slashy@main', 'GitHub: path "a\\b.md" contains a backslash'],
  ])('when %s, then INSTALL_FAILED: %s', async (src, msg) => {
    expect((await b.run('main', `/install ${src} --as weather`)).body).toBe(`ERROR(INSTALL_FAILED): ${msg}`);
    untouched();
  });

  it('when the no-string.md check fails, then nothing below the top folder is listed or downloaded', async () => {
    await b.run('main', '/install gh:acme/loom-apps/empty@main');
    expect(api.paths()).toEqual(['/repos/acme/loom-apps/contents/empty']);
  });

  it('when a download fails, then INSTALL_FAILED names the download URL', async () => {
    repos.get('acme/loom-apps')!.files['weather/pages/gone.md'] = 'x';
    api.routes.set('/raw/acme/loom-apps/main/weather/pages/gone.md', send('gone', { status: 404, type: 'text/plain' }));
    try {
      expect((await b.run('main', '/install gh:acme/loom-apps/weather@main --as weather')).body).toBe(`ERROR(INSTALL_FAILED): Cannot fetch ${api.url('/raw/acme/loom-apps/main/weather/pages/gone.md')}: HTTP 404`);
      untouched();
    } finally {
      delete repos.get('acme/loom-apps')!.files['weather/pages/gone.md'];
      api.routes.clear();
    }
  });
});

describe('GitHub tokens (behaviour.md §7.3)', () => {
  afterAll(async () => { await b.run('main', '/unset $GITHUB_TOKEN $GH_TOKEN').catch(() => undefined); });

  it('when $GITHUB_TOKEN is set globally, then the API and downloads on its origin get it, another origin does not', async () => {
    await b.run('main', '/set $GITHUB_TOKEN = "ghp_global"');
    await b.run('main', '/set $GH_TOKEN = "ghp_second"');
    expect((await b.run('main', '/install gh:acme/elsewhere@main')).ok).toBe(true);
    const auth = (s: FileServer) => s.requests.map((q) => q.headers.authorization ?? '-');
    expect(api.requests.length).toBeGreaterThan(0);
    expect(new Set(auth(api))).toEqual(new Set(['Bearer ghp_global']));
    expect(cdn.requests.map((q) => q.path)).toEqual(['/raw/acme/elsewhere/main/string.md', '/raw/acme/elsewhere/main/more.md']);
    expect(new Set(auth(cdn))).toEqual(new Set(['-']));
  });

  it('when only $GH_TOKEN is set, then it is used; an app-scoped $GITHUB_TOKEN is not the global one', async () => {
    await b.run('main', '/unset $GITHUB_TOKEN');
    await b.run('app:x', '/set $GITHUB_TOKEN = "ghp_app_only"');
    expect((await b.run('main', '/install gh:acme/weather-app@main --as wa2')).ok).toBe(true);
    expect(new Set(api.requests.map((q) => q.headers.authorization))).toEqual(new Set(['Bearer ghp_second']));
  });

  it('when the env store has none, then the process environment GITHUB_TOKEN is used', async () => {
    await b.run('main', '/unset $GH_TOKEN');
    const saved = process.env.GITHUB_TOKEN;
    process.env.GITHUB_TOKEN = 'ghp_process';
    try {
      expect((await b.run('main', '/install gh:acme/weather-app@main --as wa3')).ok).toBe(true);
      expect(new Set(api.requests.map((q) => q.headers.authorization))).toEqual(new Set(['Bearer ghp_process']));
    } finally {
      if (saved === undefined) delete process.env.GITHUB_TOKEN; else process.env.GITHUB_TOKEN = saved;
    }
  });
});
