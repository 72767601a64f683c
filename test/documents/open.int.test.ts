import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { docsApp, type DocsApp } from './helpers.js';

const F = '```';
let d: DocsApp;
let n = 0;
/** A fresh tab topic per test so state never leaks between tests. */
let topic: string;
beforeAll(async () => {
  d = await docsApp();
  d.write('notes/plan.md', [
    '---', 'title: Plan', '---', '[!requirements](./setup.md)', '', '# Ignored H1', '', 'Intro [@next Next page](./next.md).', '',
    '## Steps {#steps}', '', 'Do it.', '', '<!-- #box -->', 'boxed', '<!-- /box -->', '',
    `${F}act.go`, 'GET https://x.test/go', '  q: string (required) "Q"', F, '',
    `${F}act.now`, 'CLI date', F, '',
  ].join('\n'));
  d.write('notes/next.md', '# Next\n\nsecond page\n');
  d.write('notes/setup.md', 'setup');
  d.write('bin.md', Buffer.from([0x23, 0x20, 0x00, 0x01]));
  d.write('big.md', Buffer.alloc(5 * 1024 * 1024 + 1, 0x61));
  d.write('five.md', Buffer.alloc(5 * 1024 * 1024, 0x61));
});
afterAll(async () => { await d.close(); });
beforeEach(() => { topic = `t${++n}`; });

describe('/open local targets (behaviour.md §3.2)', () => {
  it('when an absolute path is opened, then the document renders with hints and meta is {uri, title, current_block}', async () => {
    const r = await d.run(topic, `/open ${join(d.home, 'notes/plan.md')}`);
    expect(r.ok).toBe(true);
    expect(r.body).toBe([
      'Opened ~/notes/plan.md', '---', '# Ignored H1', '', 'Intro [Next page][@next].', '', '## Steps {#steps}', '', 'Do it.', '', 'boxed', '',
      '[actions] go, now', 'next: /act.go --help · /act.now',
    ].join('\n'));
    expect(r.meta).toEqual({ uri: pathToFileURL(join(d.home, 'notes/plan.md')).href, title: 'Plan', current_block: null });
  });
  it('when ~/, file:// and a path relative to the base directory are opened, then each loads', async () => {
    expect((await d.run(topic, '/open ~/notes/plan.md')).body.split('\n')[0]).toBe('Opened ~/notes/plan.md');
    expect((await d.run(topic, '/open next.md')).body.split('\n')[0]).toBe('Opened ~/notes/next.md');
    expect((await d.run(topic, `/open ${pathToFileURL(join(d.home, 'notes/plan.md')).href}`)).body.split('\n')[0]).toBe('Opened ~/notes/plan.md');
  });
  it('when a relative path is opened with no document, then it resolves against the home', async () => {
    expect((await d.run(topic, '/open notes/next.md')).meta?.title).toBe('Next');
  });
  it('when a folder is opened, then it lists it, sets the base directory and leaves document and meta unchanged', async () => {
    await d.run(topic, '/open ~/notes/next.md');
    const r = await d.run(topic, '/open ~');
    expect(r.body).toBe(['Listing ~/', '---', '  notes/', '  big.md', '  bin.md', '  five.md'].join('\n'));
    expect(r.meta?.title).toBe('Next');
    expect((await d.run(topic, '/open notes/plan.md')).ok).toBe(true);
  });
  it('when the file is missing, then NOT_FOUND names it with a /ls recovery', async () => {
    const r = await d.run(topic, '/open ~/notes/none.md');
    expect([r.code, r.body]).toEqual(['NOT_FOUND', 'ERROR(NOT_FOUND): File not found: ~/notes/none.md\nRecovery: /ls ~/notes']);
    expect(r.meta).toBeNull();
  });
  it('when the missing file\'s folders are missing too, then the /ls recovery names the nearest existing folder', async () => {
    expect((await d.run(topic, '/open ~/does/not/exist.md')).body).toBe('ERROR(NOT_FOUND): File not found: ~/does/not/exist.md\nRecovery: /ls ~');
    expect((await d.run(topic, '/open ~/notes/deeper/none.md')).body).toBe('ERROR(NOT_FOUND): File not found: ~/notes/deeper/none.md\nRecovery: /ls ~/notes');
  });
  it('when the file is binary or over 5 MiB, then INVALID_TARGET says why; exactly 5 MiB opens', async () => {
    expect((await d.run(topic, '/open ~/bin.md')).body).toBe('ERROR(INVALID_TARGET): Not a text document: ~/bin.md (binary)');
    expect((await d.run(topic, '/open ~/big.md')).body).toBe('ERROR(INVALID_TARGET): Not a text document: ~/big.md (over 5 MiB)');
    expect((await d.run(topic, '/open ~/five.md')).ok).toBe(true);
  });
  it('when the path holds a NUL character, then INVALID_PATH', async () => {
    expect((await d.run(topic, '/open ~/a\u0000b.md')).body).toBe('ERROR(INVALID_PATH): Path contains a NUL character');
  });
  it('when the target has another scheme, then INVALID_TARGET Unsupported target', async () => {
    expect((await d.run(topic, '/open ftp://x.test/a.md')).body).toBe('ERROR(INVALID_TARGET): Unsupported target: ftp://x.test/a.md');
    expect((await d.run(topic, '/open mailto:a@b.c')).body).toBe('ERROR(INVALID_TARGET): Unsupported target: mailto:a@b.c');
  });
  it('when plain http names a non-loopback host, then INVALID_TARGET', async () => {
    expect((await d.run(topic, '/open http://example.com/a.md')).body).toBe('ERROR(INVALID_TARGET): Plain http:// is allowed only for loopback hosts; use https://');
  });
  it('when /open has no target and no document in a tab, then INVALID_ARGS usage', async () => {
    expect((await d.run(topic, '/open')).body).toBe('ERROR(INVALID_ARGS): Usage: /open <file|folder|URL|app:NAME|@shortcut|#anchor>');
  });
  it('when /open has no target but a document, then it refreshes', async () => {
    await d.run(topic, '/open ~/notes/next.md');
    expect((await d.run(topic, '/open')).body.split('\n')[0]).toBe('Refreshed ~/notes/next.md');
  });
  it('when /open is given a body, then INVALID_ARGS', async () => {
    expect((await d.run(topic, '/open ~/notes/next.md\nbody')).body).toBe('ERROR(INVALID_ARGS): /open does not take a body (text after the first line)');
  });
});

describe('/open anchors (behaviour.md §3.5)', () => {
  it('when #anchor is opened, then only its text shows, without hints, and current_block is set', async () => {
    await d.run(topic, '/open ~/notes/plan.md');
    const r = await d.run(topic, '/open #steps');
    expect(r.body).toBe('Opened ~/notes/plan.md#steps\n---\n## Steps {#steps}\n\nDo it.\n\nboxed');
    expect(r.meta?.current_block).toBe('#steps');
    expect((await d.run(topic, '/open #box')).body).toBe('Opened ~/notes/plan.md#box\n---\nboxed');
  });
  it('when file#anchor is opened, then the file loads and shows the anchor; the slug of a heading works too', async () => {
    const r = await d.run(topic, '/open ~/notes/next.md#next');
    expect(r.body).toBe('Opened ~/notes/next.md#next\n---\n# Next\n\nsecond page');
    expect(r.meta?.current_block).toBe('#next');
  });
  it('when the anchor is missing, then NOT_FOUND lists the anchors and nothing changes', async () => {
    await d.run(topic, '/open ~/notes/plan.md');
    const r = await d.run(topic, '/open #nope');
    expect(r.body).toBe('ERROR(NOT_FOUND): Anchor not found: #nope in ~/notes/plan.md\nAnchors: #ignored-h1, #steps, #box');
    expect(r.meta?.current_block).toBeNull();
    expect((await d.run(topic, '/open ~/notes/setup.md#x')).body).toBe('ERROR(NOT_FOUND): Anchor not found: #x in ~/notes/setup.md\nThis document has no anchors.');
  });
  it('when #anchor is opened with no document, then INVALID_TARGET', async () => {
    expect((await d.run(topic, '/open #steps')).body).toBe('ERROR(INVALID_TARGET): No document open.');
  });
});

describe('/open shortcuts (behaviour.md §3.7)', () => {
  it('when @id names a page shortcut, then its link opens relative to its document', async () => {
    await d.run(topic, '/open ~/notes/plan.md');
    expect((await d.run(topic, '/info @next')).body).toBe(`@next → ${join(d.home, 'notes/next.md')}`);
    expect((await d.run(topic, '/open @next')).meta?.title).toBe('Next');
  });
  it('when @id is unknown, then NOT_FOUND; when it holds a tuple, then INVALID_TARGET', async () => {
    expect((await d.run(topic, '/open @zzz')).body).toBe('ERROR(NOT_FOUND): Unknown shortcut: @zzz');
    const live = d.app.c.system.topicStatuses('leo').find((s) => s.session.ref.topic === topic);
    d.app.c.system.services.changeSession('leo', topic, live!.session.id, { type: 'session.shortcuts', valueShortcuts: new Map([['card-1', ['12', 'acme/web']]]) });
    expect((await d.run(topic, '/open @card-1')).body).toBe('ERROR(INVALID_TARGET): @card-1 holds a value, not a link: (12, acme/web)');
  });
});

describe('/open packages (behaviour.md §3.2 steps 1, 6, 7)', () => {
  beforeAll(() => {
    d.packages.addLocal(d.home, 'weather', {
      'string.md': '---\ntitle: Weather\n---\n[!nav:main](./nav/main.md)\n\n# Weather\n\nSee [@more More](./more.md).\n',
      'more.md': '# More\n',
      'nav/main.md': '- [@home Home](../string.md)\n- [More](../more.md)\n',
    });
  });
  it('when app:<name> is opened, then the package root shows as app:<name> with its file path', async () => {
    const r = await d.run(topic, '/open app:weather');
    expect(r.body.split('\n')[0]).toBe('Opened app:weather (~/packages/weather/string.md)');
    expect(r.body).toContain('[nav] main (2) — /nav main');
    expect(r.meta?.uri).toBe(pathToFileURL(join(d.home, 'packages/weather/string.md')).href);
  });
  it('when a bare installed name, a page or a config topic form is opened, then the package answers', async () => {
    expect((await d.run(topic, '/open weather')).body.split('\n')[0]).toBe('Opened app:weather (~/packages/weather/string.md)');
    expect((await d.run(topic, '/open app:weather:seoul/more.md')).body.split('\n')[0]).toBe('Opened app:weather/more.md (~/packages/weather/more.md)');
  });
  it('when a page of a package is reached by a relative link, then it is still shown as a package page', async () => {
    await d.run(topic, '/open app:weather');
    expect((await d.run(topic, '/open @main.home')).body.split('\n')[0]).toBe('Opened app:weather (~/packages/weather/string.md)');
    expect((await d.run(topic, '/open @more')).body.split('\n')[0]).toBe('Opened app:weather/more.md (~/packages/weather/more.md)');
    // The new page has no menu: page shortcuts are replaced on every load.
    expect((await d.run(topic, '/open @main.home')).body).toBe('ERROR(NOT_FOUND): Unknown shortcut: @main.home');
  });
  it('when an app topic opens without a target, then its package root loads (config part ignored)', async () => {
    const r = await d.run('app:weather:seoul', '/open');
    expect(r.body.split('\n')[0]).toBe('Opened app:weather (~/packages/weather/string.md)');
  });
  it('when the package is not installed, then NOT_FOUND with the install recovery', async () => {
    const want = "ERROR(NOT_FOUND): App 'nope' is not installed.\nRecovery: /install <source> --app --as nope";
    expect((await d.run(topic, '/open app:nope')).body).toBe(want);
    expect((await d.run('app:nope', '/open')).body).toBe(want);
  });
  it('when a page escapes the package folder, then it is not found', async () => {
    expect((await d.run(topic, '/open app:weather/../../notes/plan.md')).code).toBe('NOT_FOUND');
  });
});

describe('/open in hubs (behaviour.md §2.12)', () => {
  it('when a hub opens a target, then INVALID_TARGET; without a target, then the hub page', async () => {
    expect((await d.run('app', '/open ~/notes/plan.md')).body).toBe('ERROR(INVALID_TARGET): Hub topics show their page only; open documents in a tab or app topic.');
    const r = await d.run('tool', '/open');
    expect(r.body).toBe('Tool hub\n---\nInstalled tools (0)\n  (none)\nnext: /open app:<name> · /install <source> --tool');
    expect(r.meta).toBeNull();
  });
});

describe('/open through a symlinked folder (behaviour.md §1.4)', () => {
  it('when a symlink inside the home points inside the home, then the document opens with the path as given', async () => {
    symlinkSync(join(d.home, 'notes'), join(d.home, 'alias'));
    expect((await d.run(topic, '/open ~/alias/next.md')).body.split('\n')[0]).toBe('Opened ~/alias/next.md');
  });
});
