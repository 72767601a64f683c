import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VERSION } from '../../src/version.js';
import { freePort } from '../helpers/daemon.js';
import { hashTree, installBench, leftovers, manifest, send, startFileServer, writeTree, type FileServer, type InstallBench } from './support.js';

/**
 * URL sources and manifests (spec §2 Install manifest, §4.13; behaviour.md §7.4) against a loopback
 * server, with the hostile cases: after every failure the installed package `keep` is
 * byte-identical, its registry record unchanged, and no staging folder is left.
 */

let b: InstallBench;
let srv: FileServer;
const registry = () => JSON.parse(readFileSync(join(b.t.dataDir, 'agents/leo/state/packages.json'), 'utf8'));

beforeAll(async () => {
  b = await installBench();
  srv = await startFileServer();
  writeTree(join(b.home, 'src/keep'), { 'string.md': '# Keep v1\n', 'sub/page.md': '# Page\n' });
  expect((await b.run('main', '/install ~/src/keep')).ok).toBe(true);
});
afterAll(async () => {
  await b?.close();
  await srv?.close();
});
beforeEach(() => { srv.requests.length = 0; });

/** Run an install as `keep` that must fail with `want` and change nothing. */
async function failsUntouched(cmd: string, want: string | RegExp): Promise<void> {
  const tree = hashTree(join(b.home, 'packages/keep'));
  const rec = registry().packages.keep;
  const r = await b.run('main', cmd);
  expect(r.ok).toBe(false);
  if (typeof want === 'string') expect(r.body).toBe(want);
  else expect(r.body).toMatch(want);
  expect(hashTree(join(b.home, 'packages/keep'))).toBe(tree);
  expect(registry().packages.keep).toEqual(rec);
  expect(leftovers(b.home)).toEqual([]);
}

const S = (extra: Record<string, unknown> = {}) => ({ path: 'string.md', content: '# Root\n', ...extra });

describe('the manifest path table (behaviour.md §7.4 step 3): every path is validated before any fetch or write', () => {
  it.each([
    ['a/../b.md', 'contains ".."'],
    ['notes..md', 'contains ".."'],
    ['/etc/passwd', 'starts with "/"'],
    ['\\evil.md', 'starts with a backslash'],
    ['a\u0000b.md', 'contains a NUL character'],
    ['a\\b.md', 'contains a backslash'],
    ['a//b.md', 'has an empty or "." segment'],
    ['./a.md', 'has an empty or "." segment'],
    ['dir/', 'has an empty or "." segment'],
    ['x'.repeat(256), 'is longer than 255 characters'],
  ])('when a path is %j, then it is refused (%s) and only the manifest was fetched', async (p, reason) => {
    srv.routes.set('/bad.json', send(manifest([{ path: 'string.md', url: srv.url('/s.md') }, { path: p, url: srv.url('/f.md') }])));
    await failsUntouched(`/install ${srv.url('/bad.json')} --as keep`, `ERROR(INSTALL_FAILED): Invalid manifest entry 1: path "${p}" ${reason}`);
    expect(srv.paths()).toEqual(['/bad.json']);
  });

  it('when a path is duplicated, then it is refused', async () => {
    srv.routes.set('/dup.json', send(manifest([S(), { path: 'a.md', content: 'a' }, { path: 'a.md', content: 'b' }])));
    await failsUntouched(`/install ${srv.url('/dup.json')} --as keep`, 'ERROR(INSTALL_FAILED): Invalid manifest entry 2: path "a.md" is duplicated');
  });

  it('when a path is exactly 255 characters, then it is accepted', async () => {
    const p = 'y'.repeat(252) + '.md';
    srv.routes.set('/long.json', send(manifest([S(), { path: p, content: 'long' }])));
    expect((await b.run('main', `/install ${srv.url('/long.json')} --as longpath`)).ok).toBe(true);
    expect(readFileSync(join(b.home, 'packages/longpath', p), 'utf8')).toBe('long');
  });

  it('when the manifest has 501 entries, then it is refused; 500 install', async () => {
    const files = [S(), ...Array.from({ length: 500 }, (_, i) => ({ path: `f/${i}.md`, content: `${i}` }))];
    srv.routes.set('/501.json', send(manifest(files)));
    await failsUntouched(`/install ${srv.url('/501.json')} --as keep`, 'ERROR(INSTALL_FAILED): Manifest has 501 files; at most 500 are allowed');
    srv.routes.set('/500.json', send(manifest(files.slice(0, 500))));
    expect((await b.run('main', `/install ${srv.url('/500.json')} --as five`)).body.split('\n')[0]).toBe(`Installed app:five (local, 500 files) from ${srv.url('/500.json')}`);
  });

  it('when string.md is missing, then it is refused before any file is fetched, naming the first 5 paths', async () => {
    const files = ['a.md', 'b.md', 'c.md', 'd.md', 'e.md', 'f.md'].map((p) => ({ path: p, url: srv.url(`/${p}`) }));
    srv.routes.set('/nostring.json', send(manifest(files)));
    const url = srv.url('/nostring.json');
    await failsUntouched(`/install ${url} --as keep`, `ERROR(INSTALL_FAILED): Manifest at ${url} has no "string.md" entry in files[] (declared: a.md, b.md, c.md, d.md, e.md)`);
    expect(srv.paths()).toEqual(['/nostring.json']);
  });

  it.each([
    [{ files: [] }, 'Manifest files[] must be a non-empty array'],
    [manifest([S(), { path: 'a.md' }]), 'Invalid manifest entry 1 (a.md): needs a "url" or "content" string'],
    [manifest([S(), { path: 'a.md', url: 'http://example.com/a.md' }]), 'Invalid manifest entry 1 (a.md): url must be https://'],
    [manifest([S(), { path: 'a.md', url: 'ftp://127.0.0.1/a.md' }]), 'Invalid manifest entry 1 (a.md): url must be https://'],
    [manifest([S()], { delivery: 'push' }), 'Unknown delivery "push" (use local, link or any)'],
    [manifest([S(), { path: 7, content: 'x' }]), 'Invalid manifest entry 1: path must be a string'],
  ])('when the manifest is %j, then INSTALL_FAILED: %s', async (body, msg) => {
    srv.routes.set('/m.json', send(body));
    await failsUntouched(`/install ${srv.url('/m.json')} --as keep`, `ERROR(INSTALL_FAILED): ${msg}`);
    expect(srv.paths()).toEqual(['/m.json']);
  });
});

describe('fetch failures leave everything as it was', () => {
  const tenFiles = () => [S(), ...Array.from({ length: 10 }, (_, i) => ({ path: `f${i + 1}.md`, url: srv.url(`/f${i + 1}.md`) }))];
  beforeAll(() => {
    for (let i = 1; i <= 10; i++) srv.routes.set(`/f${i}.md`, send(`# file ${i}\n${'x'.repeat(65536)}`));
  });

  it('when the connection is cut in the middle of file 7 of 10, then INSTALL_FAILED names it', async () => {
    srv.routes.set('/f7.md', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/markdown', 'Content-Length': 65536 });
      res.write('x'.repeat(1000), () => res.socket?.destroy());
    });
    srv.routes.set('/ten.json', send(manifest(tenFiles())));
    await failsUntouched(`/install ${srv.url('/ten.json')} --as keep`, `ERROR(INSTALL_FAILED): Cannot fetch ${srv.url('/f7.md')}: connection closed before the end of the file`);
    srv.routes.set('/f7.md', send('# file 7\n'));
  });

  it('when one file answers 404, then INSTALL_FAILED with its status', async () => {
    srv.routes.delete('/f4.md');
    srv.routes.set('/ten.json', send(manifest(tenFiles())));
    await failsUntouched(`/install ${srv.url('/ten.json')} --as keep`, `ERROR(INSTALL_FAILED): Cannot fetch ${srv.url('/f4.md')}: HTTP 404`);
    srv.routes.set('/f4.md', send('# file 4\n'));
  });

  it('when a file is over 5 MiB (declared or streamed), then INSTALL_FAILED; exactly 5 MiB installs', async () => {
    const big = Buffer.alloc(5 * 1048576 + 1, 0x61);
    srv.routes.set('/big.bin', send(big, { type: 'application/octet-stream' }));
    srv.routes.set('/chunked.bin', (_req, res) => { res.writeHead(200); res.end(big); });
    srv.routes.set('/exact.bin', send(big.subarray(0, 5 * 1048576), { type: 'application/octet-stream' }));
    for (const p of ['/big.bin', '/chunked.bin']) {
      srv.routes.set('/m.json', send(manifest([S(), { path: 'data.bin', url: srv.url(p) }])));
      await failsUntouched(`/install ${srv.url('/m.json')} --as keep`, `ERROR(INSTALL_FAILED): Cannot fetch ${srv.url(p)}: file is larger than 5 MiB`);
    }
    srv.routes.set('/m.json', send(manifest([S(), { path: 'data.bin', url: srv.url('/exact.bin') }])));
    expect((await b.run('main', `/install ${srv.url('/m.json')} --as exact`)).ok).toBe(true);
  });

  it('when the files add up to more than 50 MiB, then INSTALL_FAILED', async () => {
    const five = Buffer.alloc(5 * 1048576, 0x62);
    srv.routes.set('/five.bin', (_req, res) => { res.writeHead(200); res.end(five); });
    const files = [S(), ...Array.from({ length: 11 }, (_, i) => ({ path: `p${i}.bin`, url: srv.url('/five.bin') }))];
    srv.routes.set('/huge.json', send(manifest(files)));
    await failsUntouched(`/install ${srv.url('/huge.json')} --as keep`, 'ERROR(INSTALL_FAILED): Package is larger than 50 MiB');
  });

  it('when string.md is not UTF-8 text, then INSTALL_FAILED before anything is written', async () => {
    srv.routes.set('/latin1.md', send(Buffer.from('# Caf\xe9\n', 'latin1'), { type: 'text/markdown' }));
    srv.routes.set('/m.json', send(manifest([{ path: 'string.md', url: srv.url('/latin1.md') }, { path: 'a.md', url: srv.url('/f1.md') }])));
    await failsUntouched(`/install ${srv.url('/m.json')} --as keep`, 'ERROR(INSTALL_FAILED): string.md is not UTF-8 text');
    expect(srv.paths()).toEqual(['/m.json', '/latin1.md']);
  });

  it('when the source is plain http:// to a non-loopback host, then it is refused before any connection', async () => {
    await failsUntouched('/install http://example.com/m.json --as keep', 'ERROR(INSTALL_FAILED): Refusing plain http:// URL http://example.com/m.json; use https:// (http:// is allowed only for 127.0.0.1, localhost and [::1])');
  });

  it('when the manifest or a file redirects to plain http://, then the hop is refused', async () => {
    srv.routes.set('/moved.json', send('', { status: 302, headers: { Location: 'http://example.org/m.json' } }));
    await failsUntouched(`/install ${srv.url('/moved.json')} --as keep`, 'ERROR(INSTALL_FAILED): Refusing plain http:// URL http://example.org/m.json; use https:// (http:// is allowed only for 127.0.0.1, localhost and [::1])');
    srv.routes.set('/moved.md', send('', { status: 301, headers: { Location: 'http://example.org/f.md' } }));
    srv.routes.set('/m.json', send(manifest([S(), { path: 'a.md', url: srv.url('/moved.md') }])));
    await failsUntouched(`/install ${srv.url('/m.json')} --as keep`, 'ERROR(INSTALL_FAILED): Refusing plain http:// URL http://example.org/f.md; use https:// (http:// is allowed only for 127.0.0.1, localhost and [::1])');
  });

  it('when a loopback hop redirects to another loopback URL, then it is followed', async () => {
    srv.routes.set('/old.json', send('', { status: 307, headers: { Location: '/new.json' } }));
    srv.routes.set('/new.json', send(manifest([S()])));
    expect((await b.run('main', `/install ${srv.url('/old.json')} --as moved`)).ok).toBe(true);
  });

  it('when the manifest answers 500 or nobody listens, then Cannot fetch with the reason', async () => {
    srv.routes.set('/err.json', send('down', { status: 500, type: 'text/plain' }));
    await failsUntouched(`/install ${srv.url('/err.json')} --as keep`, `ERROR(INSTALL_FAILED): Cannot fetch ${srv.url('/err.json')}: HTTP 500`);
    const port = await freePort();
    await failsUntouched(`/install http://127.0.0.1:${port}/m.json --as keep`, new RegExp(`^ERROR\\(INSTALL_FAILED\\): Cannot fetch http://127.0.0.1:${port}/m.json: .*ECONNREFUSED`));
  });

  it('when a file never answers, then the fetch times out (timeout shortened for the test)', async () => {
    srv.routes.set('/hang.md', () => undefined);
    srv.routes.set('/m.json', send(manifest([S(), { path: 'a.md', url: srv.url('/hang.md') }])));
    b.installs.deps.fetchTimeoutMs = 300;
    try {
      await failsUntouched(`/install ${srv.url('/m.json')} --as keep`, `ERROR(INSTALL_FAILED): Cannot fetch ${srv.url('/hang.md')}: timed out after 0.3 s`);
    } finally {
      b.installs.deps.fetchTimeoutMs = undefined;
    }
  });
});

describe('manifest delivery (behaviour.md §7.4 steps 4–7)', () => {
  it('when delivery is local (or absent), then files are fetched with Accept */* and written; inline content wins; hints and unknown fields are not stored', async () => {
    srv.routes.set('/apps/moltbook/manifest.json', send(manifest([
      { path: 'string.md', content: '---\nversion: 2.1.0\n---\n# Moltbook\n' },
      { path: 'pages/feed.md', url: srv.url('/feed.md') },
      { path: 'both.md', content: 'inline wins', url: srv.url('/never.md') },
    ], { install_hint: 'Run /install first', homepage: 'https://moltbook.example', delivery: 'local' })));
    srv.routes.set('/feed.md', send('# Feed\n'));
    const url = srv.url('/apps/moltbook/manifest.json');
    const r = await b.run('main', `/install ${url}`);
    expect(r.body).toBe(`Installed app:moltbook (local, 3 files) from ${url}\nnext: /open app:moltbook`);
    const pkg = join(b.home, 'packages/moltbook');
    expect(readFileSync(join(pkg, 'pages/feed.md'), 'utf8')).toBe('# Feed\n');
    expect(readFileSync(join(pkg, 'both.md'), 'utf8')).toBe('inline wins');
    expect(srv.paths()).toEqual(['/apps/moltbook/manifest.json', '/feed.md']);
    const [m, f] = srv.requests;
    expect(m.headers.accept).toBe('application/json, text/markdown, text/plain');
    expect(m.headers['user-agent']).toBe(`loom/${VERSION}`);
    expect(f.headers.accept).toBe('*/*');
    const rec = registry().packages.moltbook;
    expect(rec).toMatchObject({ mode: 'local', source: url, version: '2.1.0', files: 3 });
    expect(JSON.stringify(registry())).not.toContain('Run /install first');
    expect(JSON.stringify(registry())).not.toContain('homepage');
    expect(readdirSync(pkg).sort()).toEqual(['both.md', 'pages', 'string.md']);
    expect((await b.run('app:moltbook', '/open')).body).not.toContain('Run /install first');
  });

  it('when delivery is link, then only the URL is registered and every open fetches the manifest again', async () => {
    srv.routes.set('/linked/manifest.json', send(manifest([{ path: 'string.md', content: '# Linked v1\n' }], { delivery: 'link' })));
    const url = srv.url('/linked/manifest.json');
    expect((await b.run('main', `/install ${url}`)).body).toBe(`Linked app:linked → ${url} (fetched on every open)\nnext: /open app:linked`);
    expect(existsSync(join(b.home, 'packages/linked'))).toBe(false);
    expect(registry().packages.linked).toMatchObject({ mode: 'link', uri: url, source: url });
    srv.requests.length = 0;
    expect((await b.run('app:linked', '/open')).body).toContain('# Linked v1');
    srv.routes.set('/linked/manifest.json', send(manifest([{ path: 'string.md', content: '# Linked v2\n' }], { delivery: 'link' })));
    expect((await b.run('app:linked', '/refresh')).body).toContain('# Linked v2');
    expect(srv.paths()).toEqual(['/linked/manifest.json', '/linked/manifest.json']);
    expect((await b.run('main', '/uninstall linked')).body).toBe('Uninstalled app:linked (link removed)');
  });

  it('when flags disagree with delivery, then flags win (--link forces link, --local a snapshot; any is local)', async () => {
    srv.routes.set('/any.json', send(manifest([{ path: 'string.md', content: '# Any\n' }], { delivery: 'any' })));
    expect((await b.run('main', `/install ${srv.url('/any.json')} --as anyl`)).body.split('\n')[0]).toBe(`Installed app:anyl (local, 1 file) from ${srv.url('/any.json')}`);
    expect((await b.run('main', `/install --link ${srv.url('/any.json')} --as anyk`)).body.split('\n')[0]).toBe(`Linked app:anyk → ${srv.url('/any.json')} (fetched on every open)`);
    srv.routes.set('/lnk.json', send(manifest([{ path: 'string.md', content: '# L\n' }], { delivery: 'link' })));
    expect((await b.run('main', `/install ${srv.url('/lnk.json')} --local --as snap`)).body.split('\n')[0]).toBe(`Installed app:snap (local, 1 file) from ${srv.url('/lnk.json')}`);
  });

  it('when a link replaces a local package, then the old folder goes and it says Reinstalled', async () => {
    srv.routes.set('/re.json', send(manifest([{ path: 'string.md', content: '# Re\n' }], { delivery: 'link' })));
    expect((await b.run('main', `/install ${srv.url('/re.json')} --as snap`)).body.split('\n')[0]).toBe(`Reinstalled app:snap → ${srv.url('/re.json')} (fetched on every open)`);
    expect(existsSync(join(b.home, 'packages/snap'))).toBe(false);
    expect(leftovers(b.home)).toEqual([]);
  });
});

describe('single documents by URL (behaviour.md §7.4 step 6)', () => {
  it('when the URL is plain Markdown, then it is a linked web app named from the URL', async () => {
    srv.routes.set('/docs/daily-brief.md', send('# Brief\n'));
    const url = srv.url('/docs/daily-brief.md');
    expect((await b.run('main', `/install ${url}`)).body).toBe(`Linked app:daily-brief → ${url} (fetched on every open)\nnext: /open app:daily-brief`);
    expect((await b.run('app:daily-brief', '/open')).body).toContain('# Brief');
  });

  it('when --local is given, then the document is snapshot as string.md; frontmatter names it', async () => {
    srv.routes.set('/x/index.md', send('---\nname: snapdoc\n---\n# Snap\n'));
    expect((await b.run('main', `/install ${srv.url('/x/index.md')} --local`)).body.split('\n')[0]).toBe(`Installed app:snapdoc (local, 1 file) from ${srv.url('/x/index.md')}`);
    expect(readFileSync(join(b.home, 'packages/snapdoc/string.md'), 'utf8')).toBe('---\nname: snapdoc\n---\n# Snap\n');
  });

  it('when the URL is JSON without files[], then it falls through to document handling', async () => {
    srv.routes.set('/data/status.json', send({ status: 'ok', files: 'not an array' }));
    const url = srv.url('/data/status.json');
    expect((await b.run('main', `/install ${url}`)).body.split('\n')[0]).toBe(`Linked app:status → ${url} (fetched on every open)`);
    expect((await b.run('main', `/install ${url} --local --as statusdoc`)).ok).toBe(true);
    expect(readFileSync(join(b.home, 'packages/statusdoc/string.md'), 'utf8')).toBe('```json\n{\n  "status": "ok",\n  "files": "not an array"\n}\n```');
  });

  it('when an HTML page is snapshot, then it is stored as Markdown', async () => {
    srv.routes.set('/page', send('<html><body><main><h1>Hello</h1><p>World</p></main></body></html>', { type: 'text/html' }));
    expect((await b.run('main', `/install ${srv.url('/page')} --local`)).body.split('\n')[0]).toBe(`Installed app:page (local, 1 file) from ${srv.url('/page')}`);
    expect(readFileSync(join(b.home, 'packages/page/string.md'), 'utf8')).toBe('# Hello\n\nWorld');
  });

  it('when the host is the whole name, then the host is used', async () => {
    srv.routes.set('/manifest.json', send(manifest([{ path: 'string.md', content: '# Host\n' }])));
    expect((await b.run('main', `/install ${srv.url('/manifest.json')}`)).body.split('\n')[0]).toBe(`Installed app:127-0-0-1 (local, 1 file) from ${srv.url('/manifest.json')}`);
  });
});

describe('files are streamed to disk, and progress is visible while they come (behaviour.md §13.2)', () => {
  it('when a file arrives slowly, then its first bytes are on disk in staging and GET /installs shows the progress', async () => {
    let finish: () => void = () => undefined;
    srv.routes.set('/slow.bin', (_req, res) => {
      res.writeHead(200, { 'Content-Length': 2 * 65536 });
      res.write(Buffer.alloc(65536, 0x61));
      finish = () => res.end(Buffer.alloc(65536, 0x62));
    });
    srv.routes.set('/slow.json', send(manifest([S(), { path: 'data/slow.bin', url: srv.url('/slow.bin') }])));
    const pending = b.t.client('leo').exec('main', `/install ${srv.url('/slow.json')} --as slow`, 'req-slow');
    const partial = () => {
      const st = leftovers(b.home).find((n) => n.startsWith('.staging-slow-'));
      const p = st ? join(b.home, 'packages', st, 'data/slow.bin') : '';
      return p && existsSync(p) ? readFileSync(p).length : 0;
    };
    while (partial() < 65536) await new Promise((r) => setTimeout(r, 10));
    const res = await fetch(`${b.t.base}/installs?request_id=req-slow`, { headers: { 'X-Agent-Id': 'leo' } });
    const body = await res.json() as { agent_id: string; installs: Array<Record<string, unknown>> };
    expect(body.agent_id).toBe('leo');
    expect(body.installs).toHaveLength(1);
    expect(body.installs[0]).toMatchObject({ name: 'slow', source: srv.url('/slow.json'), state: 'staging', files_total: 2, request_id: 'req-slow' });
    expect(body.installs[0].install_id).toMatch(/^ins_[0-9a-f]{16}$/);
    expect(Number(body.installs[0].bytes)).toBeGreaterThanOrEqual(Buffer.byteLength('# Root\n'));
    finish();
    expect((await pending).head?.ok).toBe(true);
    expect(readFileSync(join(b.home, 'packages/slow/data/slow.bin')).length).toBe(2 * 65536);
  });

  it('when GET /installs lacks or names an unknown agent, then 400 and 401', async () => {
    expect((await fetch(`${b.t.base}/installs`)).status).toBe(400);
    const r = await fetch(`${b.t.base}/installs`, { headers: { 'X-Agent-Id': 'ghost' } });
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ error: 'Unknown agent: ghost' });
  });

  it('when ?request_id is given more than once, then 400 naming it, on the list and on the stream', async () => {
    for (const path of ['/installs', '/installs/stream']) {
      for (const q of ['request_id=a&request_id=b', 'request_id=__proto__&request_id=constructor&request_id=']) {
        const r = await fetch(`${b.t.base}${path}?${q}`, { headers: { 'X-Agent-Id': 'leo' } });
        expect([path, q, r.status]).toEqual([path, q, 400]);
        expect(await r.json()).toEqual({ error: 'Invalid request_id', message: 'give request_id once, as text' });
      }
    }
    // Given once, it filters as before; `request_id[]` is a parameter of another name (Express's simple
    // query parser), ignored like any unknown one.
    const one = await fetch(`${b.t.base}/installs?request_id=none-such`, { headers: { 'X-Agent-Id': 'leo' } });
    expect(await one.json()).toEqual({ agent_id: 'leo', installs: [] });
    const all = await fetch(`${b.t.base}/installs`, { headers: { 'X-Agent-Id': 'leo' } });
    const bracket = await fetch(`${b.t.base}/installs?request_id[]=none-such`, { headers: { 'X-Agent-Id': 'leo' } });
    expect(await bracket.json()).toEqual(await all.json());
  });
});
