import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../helpers/daemon.js';
import { docsApp, type DocsApp } from './helpers.js';

const F = '```';
let d: DocsApp;
let server: Server;
let base: string;
let n = 0;
let topic: string;
const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
const hits = new Map<string, number>();
let docText = `# Remote doc\n\nGo [@next Next](./next.md).\n\n${F}act.get\nGET https://x.test/\n${F}\n`;

const routes: Record<string, (base: string) => { status?: number; type?: string; body?: string | Buffer; location?: string; hang?: boolean }> = {
  '/doc.md': () => ({ type: 'text/markdown; charset=utf-8', body: docText }),
  '/next.md': () => ({ type: 'text/markdown', body: '# Next remote\n' }),
  '/dir/page.md': () => ({ type: 'text/plain', body: '# Page\n\n[@up Up](../doc.md)\n' }),
  '/page.html': () => ({
    type: 'text/html; charset=utf-8',
    body: '<!doctype html><html><head><title>T</title><script>x()</script></head><body><nav><a href="/">Home</a></nav><header>Head</header>'
      + '<main><h1>Article</h1><p>Read <a href="/next.md">next</a>.</p><pre><code>code()</code></pre></main><footer>Foot</footer></body></html>',
  }),
  '/m.json': (b) => ({
    type: 'application/json',
    body: JSON.stringify({
      files: [
        { path: 'string.md', content: `[!nav:main](./nav.md)\n# Manifest root\n\nSee [@a A page](./docs/a.md).\n\n${F}act.hi\nGET https://x.test/\n${F}\n` },
        { path: 'nav.md', content: '- [@root Root](./string.md)\n- [A](./docs/a.md)\n' },
        { path: 'docs/a.md', url: `${b}/files/a.md` },
      ],
      install_hint: 'Install with /install this URL',
    }),
  }),
  '/files/a.md': () => ({ type: 'text/markdown', body: '# A from manifest\n\n[@b B](./b.md)\n' }),
  '/bad.json': () => ({ type: 'application/json', body: JSON.stringify({ files: [{ path: 'a.md', content: 'x' }] }) }),
  '/data.json': () => ({ type: 'application/json', body: '{"a":1,"b":[true]}' }),
  '/err': () => ({ status: 500, type: 'text/plain', body: 'boom' }),
  '/redirect': (b) => ({ status: 302, location: `${b}/doc.md` }),
  '/loop': () => ({ status: 302, location: '/loop' }),
  '/redirect-out': () => ({ status: 301, location: 'http://example.com/x.md' }),
  '/big': () => ({ type: 'text/plain', body: Buffer.alloc(5 * 1024 * 1024 + 1, 0x61) }),
  '/bin': () => ({ type: 'application/octet-stream', body: Buffer.from([1, 2, 0, 3]) }),
  '/slow': () => ({ hang: true }),
  '/slow-body': () => ({ hang: true }),
  '/env.md': () => ({ type: 'text/markdown', body: '---\nrequires: [LOOM_R_TOKEN]\n---\n# Env remote\n' }),
};

beforeAll(async () => {
  d = await docsApp();
  server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    seen.push({ url: path, headers: req.headers });
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const r = routes[path]?.(base);
    if (!r) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('nope');
      return;
    }
    if (r.hang) {
      // Headers and part of the body, then nothing: the deadline covers the body too.
      if (path === '/slow-body') res.writeHead(200, { 'Content-Type': 'text/markdown' }).write('# Part');
      return;
    }
    res.writeHead(r.status ?? 200, { ...(r.type ? { 'Content-Type': r.type } : {}), ...(r.location ? { Location: r.location } : {}) });
    res.end(r.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await d.close();
});
beforeEach(() => { topic = `r${++n}`; });

describe('/open of web documents (behaviour.md §3.3)', () => {
  it('when a Markdown URL is opened, then it renders as is, with the request headers of §3.3', async () => {
    const r = await d.run(topic, `/open ${base}/doc.md`);
    expect(r.body).toBe(`Opened ${base}/doc.md\n---\n# Remote doc\n\nGo [Next][@next].\n\n[actions] get\nnext: /act.get`);
    expect(r.meta).toEqual({ uri: `${base}/doc.md`, title: 'Remote doc', current_block: null });
    const h = seen.filter((s) => s.url === '/doc.md').pop()?.headers;
    expect(h?.accept).toBe('text/markdown, text/plain;q=0.9, text/html;q=0.8, application/json;q=0.7');
    expect(h?.['user-agent']).toMatch(/^loom\/\d+\.\d+\.\d+/);
    expect(h?.cookie).toBeUndefined();
    expect((await d.run(topic, '/info')).body).toContain('origin:    web page — HTTP actions only');
  });
  it('when a relative target is opened from a web document, then it resolves as a URL', async () => {
    await d.run(topic, `/open ${base}/dir/page.md`);
    expect((await d.run(topic, '/open @up')).meta?.uri).toBe(`${base}/doc.md`);
    expect((await d.run(topic, '/open next.md')).meta?.uri).toBe(`${base}/next.md`);
  });
  it('when an HTML page is opened, then main content is converted to Markdown and /source shows the HTML', async () => {
    const r = await d.run(topic, `/open ${base}/page.html`);
    expect(r.body).toBe(`Opened ${base}/page.html\n---\n# Article\n\nRead [next](/next.md).\n\n${F}\ncode()\n${F}`);
    const s = await d.run(topic, '/source');
    expect(s.body.split('\n')[0]).toBe(`Source of ${base}/page.html (HTML; /open shows it converted)`);
    expect(s.body).toContain('<script>x()</script>');
  });
  it('when other JSON is opened, then it shows as a pretty-printed json block', async () => {
    expect((await d.run(topic, `/open ${base}/data.json`)).body).toBe(`Opened ${base}/data.json\n---\n${F}json\n{\n  "a": 1,\n  "b": [\n    true\n  ]\n}\n${F}`);
  });
  it('when the document is refreshed, then it is fetched again', async () => {
    await d.run(topic, `/open ${base}/doc.md`);
    const before = hits.get('/doc.md') ?? 0;
    docText = '# Changed\n';
    try {
      expect((await d.run(topic, '/refresh')).body).toBe(`Refreshed ${base}/doc.md\n---\n# Changed`);
    } finally {
      docText = `# Remote doc\n`;
    }
    expect(hits.get('/doc.md')).toBe(before + 1);
  });
});

describe('/open of manifest URLs (behaviour.md §3.3)', () => {
  it('when a manifest URL is opened, then its string.md shows with the install hint after a rule', async () => {
    const r = await d.run(topic, `/open ${base}/m.json`);
    expect(r.body).toBe([
      `Opened ${base}/m.json`, '---', '# Manifest root', '', 'See [A page][@a].', '', '---', '', 'Install with /install this URL', '',
      '[nav] main (2) — /nav main', '[actions] hi', 'next: /act.hi',
    ].join('\n'));
    expect((await d.run(topic, '/info')).body).toContain('origin:    manifest page — HTTP actions only');
  });
  it('when a page of the manifest is reached by a link, a menu or #/path, then it loads from files[]', async () => {
    await d.run(topic, `/open ${base}/m.json`);
    const a = await d.run(topic, '/open @a');
    expect(a.body.split('\n')[0]).toBe(`Opened ${base}/m.json#/docs/a.md`);
    expect(a.meta?.uri).toBe(`${base}/m.json#/docs/a.md`);
    expect((await d.run(topic, '/open @b')).body).toBe('ERROR(NOT_FOUND): Not in the package manifest: docs/b.md');
    expect((await d.run(topic, `/open ${base}/m.json#/nav.md`)).meta?.title).toBeNull();
    await d.run(topic, `/open ${base}/m.json`);
    expect((await d.run(topic, '/open @main.root')).meta?.uri).toBe(`${base}/m.json`);
  });
  it('when the manifest is invalid, then INVALID_TARGET names the reason', async () => {
    expect((await d.run(topic, `/open ${base}/bad.json`)).body).toBe(`ERROR(INVALID_TARGET): Invalid manifest at ${base}/bad.json: Manifest at ${base}/bad.json has no "string.md" entry in files[] (declared: a.md)`);
  });
});

describe('remote failures (behaviour.md §3.3)', () => {
  it('when the server answers 404 or 500, then NOT_FOUND or HTTP_ERROR', async () => {
    expect((await d.run(topic, `/open ${base}/missing.md`)).body).toBe(`ERROR(NOT_FOUND): Not found: ${base}/missing.md`);
    expect((await d.run(topic, `/open ${base}/err`)).body).toBe(`ERROR(HTTP_ERROR): HTTP 500 fetching ${base}/err`);
  });
  it('when the server redirects, then the redirect is followed; more than 5 hops is a network error', async () => {
    expect((await d.run(topic, `/open ${base}/redirect`)).meta?.title).toBe('Remote doc');
    expect((await d.run(topic, `/open ${base}/loop`)).body).toBe(`ERROR(HTTP_ERROR): Network error fetching ${base}/loop: more than 5 redirects`);
  });
  it('when a redirect leads to plain http on another host, then INVALID_TARGET', async () => {
    expect((await d.run(topic, `/open ${base}/redirect-out`)).body).toBe('ERROR(INVALID_TARGET): Plain http:// is allowed only for loopback hosts; use https://');
  });
  it('when the body is over 5 MiB or binary, then INVALID_TARGET', async () => {
    expect((await d.run(topic, `/open ${base}/big`)).body).toBe(`ERROR(INVALID_TARGET): Not a text document: ${base}/big (over 5 MiB)`);
    expect((await d.run(topic, `/open ${base}/bin`)).body).toBe(`ERROR(INVALID_TARGET): Not a text document: ${base}/bin (binary)`);
  });
  it('when the server does not answer in time, then TIMEOUT', async () => {
    const cfg = d.app.c.system.services.documents?.config as { fetchTimeoutMs: number };
    cfg.fetchTimeoutMs = 1000;
    try {
      expect((await d.run(topic, `/open ${base}/slow`)).body).toBe(`ERROR(TIMEOUT): Timed out after 1 s fetching ${base}/slow`);
      expect((await d.run(topic, `/open ${base}/slow-body`)).body).toBe(`ERROR(TIMEOUT): Timed out after 1 s fetching ${base}/slow-body`);
    } finally {
      cfg.fetchTimeoutMs = 30000;
    }
  });
  it('when nothing listens, then a network error', async () => {
    const port = await freePort();
    expect((await d.run(topic, `/open http://127.0.0.1:${port}/x.md`)).body).toMatch(new RegExp(`^ERROR\\(HTTP_ERROR\\): Network error fetching http://127\\.0\\.0\\.1:${port}/x\\.md: .*ECONNREFUSED`));
  });
});

describe('remote documents and the env store (behaviour.md §3.9, §12 Q4)', () => {
  it('when a remote document requires a variable, then only app and config scopes count', async () => {
    await d.run(topic, '/set $LOOM_R_TOKEN = "global"');
    process.env.LOOM_R_TOKEN = 'process';
    try {
      expect((await d.run(topic, `/open ${base}/env.md`)).code).toBe('ENV_REQUIRED');
      expect((await d.run('app:remote', `/open ${base}/env.md`)).code).toBe('ENV_REQUIRED');
      await d.run('app:remote', '/set $LOOM_R_TOKEN = "app"');
      expect((await d.run('app:remote', `/open ${base}/env.md`)).ok).toBe(true);
    } finally {
      delete process.env.LOOM_R_TOKEN;
    }
  });
});

describe('linked packages (behaviour.md §3.1, §7.6 mode link)', () => {
  it('when a link package names a manifest, then app:<name> re-fetches it, shows no install hint and keeps pages in the package', async () => {
    d.packages.records.set('linked', { name: 'linked', type: 'app', mode: 'link', uri: `${base}/m.json`, source: `${base}/m.json`, installedAt: '2025-06-01T10:00:00.000Z' });
    const before = hits.get('/m.json') ?? 0;
    const r = await d.run(topic, '/open app:linked');
    expect(r.body.split('\n').slice(0, 5)).toEqual([`Opened app:linked (${base}/m.json)`, '---', '# Manifest root', '', 'See [A page][@a].']);
    expect(r.body).not.toContain('Install with');
    expect((await d.run(topic, '/open @a')).body.split('\n')[0]).toBe(`Opened app:linked/docs/a.md (${base}/m.json#/docs/a.md)`);
    expect((await d.run(topic, '/info')).body).toContain('origin:    linked package — HTTP actions only');
    expect(hits.get('/m.json')).toBe(before + 2);
  });
  it('when a link package names a plain document, then app:<name> fetches it', async () => {
    d.packages.records.set('plain', { name: 'plain', type: 'app', mode: 'link', uri: `${base}/next.md`, source: `${base}/next.md`, installedAt: '2025-06-01T10:00:00.000Z' });
    expect((await d.run('app:plain', '/open')).body).toBe(`Opened app:plain (${base}/next.md)\n---\n# Next remote`);
  });
});
