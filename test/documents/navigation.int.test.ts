import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DefaultActionRunner } from '../../src/commands/docContract.js';
import { docsApp, type DocsApp } from './helpers.js';

const F = '```';
let d: DocsApp;
let n = 0;
let topic: string;
beforeAll(async () => {
  d = await docsApp();
  for (let i = 0; i < 60; i++) d.write(`h/p${i}.md`, `# P${i}\n`);
  d.write('a.md', '# A\n\n## Part\n\ntext\n');
  d.write('b.md', '# B\n');
  d.write('menu.md', [
    '[!nav:main](./nav/main.md)', '[!nav:broken](./nav/missing.md)', '', '# Menu doc', '',
    `${F}act.x`, 'GET https://x.test/', F, '', `${F}act.x.response`, 'R {Response.body}', F, '',
  ].join('\n'));
  d.write('nav/main.md', '- [@a Alpha](../a.md)\n- [Beta](../b.md)\n- [Gamma](../a.md)\n- [Delta](../b.md)\n');
});
afterAll(async () => { await d.close(); });
beforeEach(() => { topic = `n${++n}`; });

describe('/back and history (behaviour.md §2.3, §3.6)', () => {
  it('when two documents were opened, then /back returns to the first with its system line', async () => {
    await d.run(topic, '/open ~/a.md');
    await d.run(topic, '/open ~/b.md');
    const r = await d.run(topic, '/back');
    expect(r.body.split('\n')[0]).toBe('Back to ~/a.md');
    expect(r.meta?.title).toBe('A');
    expect((await d.run(topic, '/back')).body).toBe('ERROR(INVALID_TARGET): No previous document in this topic.');
  });
  it('when the same document or an anchor is opened again, then nothing is pushed', async () => {
    await d.run(topic, '/open ~/a.md');
    await d.run(topic, '/open ~/a.md');
    await d.run(topic, '/open #part');
    expect((await d.run(topic, '/back')).code).toBe('INVALID_TARGET');
  });
  it('when the previous entry had an anchor, then /back shows that anchor', async () => {
    await d.run(topic, '/open ~/a.md#part');
    await d.run(topic, '/open ~/b.md');
    const r = await d.run(topic, '/back');
    expect(r.body).toBe('Back to ~/a.md#part\n---\n## Part\n\ntext');
    expect(r.meta?.current_block).toBe('#part');
  });
  it('when more than 50 documents were opened, then the history keeps the last 50', async () => {
    for (let i = 0; i < 52; i++) await d.run(topic, `/open ~/h/p${i}.md`);
    expect((await d.run(topic, '/info')).body).toContain('history:   50 entries');
  });
  it('when the previous document cannot be reloaded, then /back fails and restores the entry', async () => {
    d.write('gone.md', '# Gone\n');
    await d.run(topic, '/open ~/gone.md');
    await d.run(topic, '/open ~/b.md');
    rmSync(join(d.home, 'gone.md'));
    expect((await d.run(topic, '/back')).body).toBe('ERROR(NOT_FOUND): File not found: ~/gone.md\nRecovery: /ls ~');
    const info = await d.run(topic, '/info');
    expect(info.body).toContain('history:   1 entry');
    expect(info.meta?.title).toBe('B');
  });
});

describe('/refresh (behaviour.md §2.3)', () => {
  it('when the file changed, then /refresh shows the new text, keeps the anchor and pushes nothing', async () => {
    const p = d.write('r.md', '# R\n\n## Sec\n\none\n');
    await d.run(topic, '/open ~/r.md#sec');
    writeFileSync(p, '# R\n\n## Sec\n\ntwo\n');
    const r = await d.run(topic, '/refresh');
    expect(r.body).toBe('Refreshed ~/r.md\n---\n# R\n\n## Sec\n\ntwo');
    expect(r.meta?.current_block).toBe('#sec');
    expect((await d.run(topic, '/back')).code).toBe('INVALID_TARGET');
  });
  it('when nothing is open, then INVALID_TARGET; in a hub, then the hub page', async () => {
    expect((await d.run(topic, '/refresh')).body).toBe('ERROR(INVALID_TARGET): No document open.');
    expect((await d.run('system', '/refresh')).body.split('\n')[0]).toBe('System hub');
  });
});

describe('/close (behaviour.md §2.3)', () => {
  it('when a document is open, then /close clears document, history, page shortcuts and base; keeps variables', async () => {
    await d.run(topic, '/set {keep} = "yes"');
    await d.run(topic, '/open ~/menu.md');
    await d.run(topic, '/open ~/a.md');
    const r = await d.run(topic, '/close');
    expect([r.ok, r.body, r.meta]).toEqual([true, 'Closed ~/a.md', null]);
    const info = await d.run(topic, '/info');
    expect(info.body).toContain('document:  (none)');
    expect((await d.run(topic, '/set')).body).toContain('{keep} = "yes"');
    expect((await d.run(topic, '/back')).code).toBe('INVALID_TARGET');
    expect((await d.run(topic, '/close')).body).toBe('ERROR(INVALID_TARGET): No document open.');
  });
  it('when a bash topic closes, then its shell ends and the output says so (behaviour.md §2.3)', async () => {
    expect((await d.run('bash:b1', '/close')).body).toBe('ERROR(INVALID_TARGET): No document open.');
    await d.run('bash:b1', '/exec true');
    expect((await d.run('bash:b1', '/close')).body).toBe('Shell of bash:b1 ended');
    expect((await d.run('bash:b1', '/topics bash')).body).toContain('bash:b1  bash  no shell');
    await d.run('bash:b1', '/exec true');
    await d.run('bash:b1', '/open ~/a.md');
    expect((await d.run('bash:b1', '/close')).body).toBe('Closed ~/a.md; shell ended');
    expect((await d.run('bash:b1', '/close')).body).toBe('ERROR(INVALID_TARGET): No document open.');
  });
});

describe('/nav (behaviour.md §3.8)', () => {
  it('when the document declares menus, then /nav lists them and /open shows [nav] hints and the nav-file warning', async () => {
    const o = await d.run(topic, '/open ~/menu.md');
    expect(o.body).toBe([
      'Opened ~/menu.md', '---', '# Menu doc', '', '[nav] main (4) — /nav main', '[nav] broken (0) — /nav broken', '[actions] x',
      'warning: line 2: cannot read nav file ./nav/missing.md: no such file', 'next: /act.x',
    ].join('\n'));
    expect((await d.run(topic, '/nav')).body).toBe('Menus of ~/menu.md\n---\nmain (4): Alpha, Beta, Gamma, … (1 more)\nbroken (0): \nnext: /nav main'.replace(': \n', ':\n'));
  });
  it('when a menu is named, then its entries show as @menu.id and open', async () => {
    await d.run(topic, '/open ~/menu.md');
    expect((await d.run(topic, '/nav main')).body).toBe('Menu main\n---\n@main.a      Alpha\n@main.beta   Beta\n@main.gamma  Gamma\n@main.delta  Delta\nnext: /open @main.a');
    expect((await d.run(topic, '/open @main.beta')).meta?.title).toBe('B');
  });
  it('when an entry id is used without its menu, then the single menu holding it answers', async () => {
    await d.run(topic, '/open ~/menu.md');
    expect((await d.run(topic, '/open @gamma')).meta?.title).toBe('A');
  });
  it('when the menu is unknown, then NOT_FOUND lists the menus', async () => {
    await d.run(topic, '/open ~/menu.md');
    expect((await d.run(topic, '/nav side')).body).toBe('ERROR(NOT_FOUND): Menu not found: side\nMenus: main, broken');
  });
  it('when the document has no menus, nothing is open, or the topic is a hub, then each answers', async () => {
    await d.run(topic, '/open ~/b.md');
    expect((await d.run(topic, '/nav')).body).toBe('Menus of ~/b.md\n---\n(no menus — declare one with [!nav:main](./nav/main.md))');
    expect((await d.run(`${topic}x`, '/nav')).body).toBe('ERROR(INVALID_TARGET): No document open.');
    expect((await d.run('app', '/nav')).body).toBe('ERROR(INVALID_TARGET): Hub topics show their page only; open documents in a tab or app topic.');
  });
});

describe('/source (behaviour.md §2.3)', () => {
  it('when a document is open, then /source shows the raw text including templates, then its warnings', async () => {
    d.write('w.md', `# W\n\n[!odd](x)\n\n${F}act.y\nGET https://x.test/\n  q: int\n${F}\n`);
    await d.run(topic, '/open ~/w.md');
    expect((await d.run(topic, '/source')).body).toBe([
      'Source of ~/w.md', '---', '# W', '', '[!odd](x)', '', `${F}act.y`, 'GET https://x.test/', '  q: int', F, '', '---', '',
      'warning: line 3: unsupported directive [!odd](x); ignored', 'warning: line 7: act.y: unknown type "int" for field q; treated as string',
    ].join('\n'));
  });
  it('when a target is given, then its source shows without opening it', async () => {
    const r = await d.run(topic, '/source ~/menu.md');
    expect(r.body).toContain('act.x.response');
    expect(r.meta).toBeNull();
  });
  it('when nothing is open, or the target is a folder, then each fails', async () => {
    expect((await d.run(topic, '/source')).body).toBe('ERROR(INVALID_TARGET): No document open.');
    expect((await d.run(topic, '/source ~/h')).body).toBe('ERROR(INVALID_PATH): Is a directory: ~/h');
  });
});

describe('/info and /help with a document (behaviour.md §2.3, §2.4)', () => {
  it('when a document is open, then /info shows document lines', async () => {
    await d.run(topic, '/open ~/menu.md');
    expect((await d.run(topic, '/info')).body).toBe([
      `Session ${topic}`, '---', 'agent:     leo', 'type:      tab', 'document:  ~/menu.md', `uri:       file://${join(d.home, 'menu.md')}`, 'title:     Menu doc',
      'anchor:    (none)', 'origin:    local — CLI actions allowed', 'base:      ~', 'history:   0 entries', 'actions:   x (GET)', 'menus:     main (4), broken (0)',
      'shortcuts: 4 page, 0 value', 'variables: 0 session (values: /set)', 'warnings:  1', '  warning: line 2: cannot read nav file ./nav/missing.md: no such file',
    ].join('\n'));
  });
  it('when the document declares actions, then /help ends with Actions on this page', async () => {
    await d.run(topic, '/open ~/menu.md');
    expect((await d.run(topic, '/help')).body.split('\n').slice(-3)).toEqual(['', 'Actions on this page', '/act.x']);
  });
});

describe('ENV_REQUIRED on load (spec §4.12 item 3; behaviour.md §3.9)', () => {
  beforeAll(() => {
    d.write('env.md', [
      '---', 'requires: [LOOM_T_CITY]', 'env:', '  - LOOM_T_CITY: "City to report on"', '  - LOOM_T_KEY', '  - LOOM_T_UNITS: "Units"', '    default: metric',
      '  - name: LOOM_T_OPT', '    required: false', '---', '[!requirements](./setup.md)', '# Env', '',
    ].join('\n'));
    d.packages.addLocal(d.home, 'envapp', { 'string.md': '---\nrequires: [LOOM_T_APPKEY]\n---\n# E\n' });
  });
  it('when required variables are missing, then the load fails with details and a recovery naming the setup page', async () => {
    const r = await d.run(topic, '/open ~/env.md');
    expect(r.body).toBe([
      'ERROR(ENV_REQUIRED): Missing required variables for ~/env.md: $LOOM_T_CITY, $LOOM_T_KEY', '  $LOOM_T_CITY — City to report on', '  $LOOM_T_KEY',
      'Recovery: /set $LOOM_T_CITY = "..." here (writes to global), then /open again · setup: /open ~/setup.md',
    ].join('\n'));
    expect(r.meta).toBeNull();
  });
  it('when the values are set in the store or the process environment, then the document opens', async () => {
    await d.run(topic, '/set $LOOM_T_CITY = "Seoul"');
    process.env.LOOM_T_KEY = 'k';
    try {
      expect((await d.run(topic, '/open ~/env.md')).ok).toBe(true);
    } finally {
      delete process.env.LOOM_T_KEY;
    }
    await d.run(topic, '/unset $LOOM_T_CITY');
  });
  it('when an app config topic lacks a value, then the recovery names the config scope', async () => {
    expect((await d.run('app:envapp:home', '/open')).body).toBe([
      'ERROR(ENV_REQUIRED): Missing required variables for app:envapp: $LOOM_T_APPKEY',
      '  $LOOM_T_APPKEY', 'Recovery: /set $LOOM_T_APPKEY = "..." here (writes to config envapp:home), then /open again',
    ].join('\n'));
    await d.run('app:envapp', '/set $LOOM_T_APPKEY = "v"');
    expect((await d.run('app:envapp:home', '/open')).ok).toBe(true);
  });
});

describe('default action (behaviour.md §4.13, the actions feature provider)', () => {
  beforeAll(() => {
    d.write('def.md', `---\ndefault: now\n---\n# Def\n\n${F}act.now\nCLI date\n${F}\n`);
  });
  it('when no actions feature is present, then /open shows only the document', async () => {
    // The actions feature is always part of the build: take its runner out for this case.
    const { services } = d.app.c.system;
    const saved = services.actions;
    delete services.actions;
    try {
      expect((await d.run(topic, '/open ~/def.md')).body).toBe('Opened ~/def.md\n---\n# Def\n\n[actions] now\nnext: /act.now');
    } finally {
      services.actions = saved;
    }
  });
  it('when the provider runs the default, then its result follows a rule on /open, /refresh and /back, even when it fails', async () => {
    const calls: string[] = [];
    const { services } = d.app.c.system;
    const saved = services.actions;
    const runner: DefaultActionRunner = async (_ctx, loaded) => {
      calls.push(loaded.display);
      return { ok: false, code: 'EXIT_1', body: 'ERROR(EXIT_1): /act.now exited with status 1' };
    };
    // Only the default runner is replaced; an invoker is kept as it was.
    services.actions = { invoke: saved?.invoke ?? (async () => ({ ok: true, code: null, body: '' })), runDefault: runner };
    try {
      const r = await d.run(topic, '/open ~/def.md');
      expect([r.ok, r.body]).toEqual([true, 'Opened ~/def.md\n---\n# Def\n\n[actions] now\nnext: /act.now\n\n---\n\nERROR(EXIT_1): /act.now exited with status 1']);
      expect((await d.run(topic, '/refresh')).body.endsWith('\n\n---\n\nERROR(EXIT_1): /act.now exited with status 1')).toBe(true);
      await d.run(topic, '/open ~/b.md');
      await d.run(topic, '/back');
      await d.run(topic, '/open #def');
      expect(calls).toEqual(['~/def.md', '~/def.md', '~/def.md']);
    } finally {
      services.actions = saved;
    }
  });
});

describe('app and tool hubs (behaviour.md §2.12)', () => {
  it('when packages are installed, then the hubs list them by type with the open app topics', async () => {
    d.packages.addLocal(d.home, 'tooly', { 'string.md': '# T\n' }, { type: 'tool', version: '1.2.0' });
    await d.run('app:envapp', '/close');
    const app = await d.run('app', '/open');
    expect(app.body).toMatch(/^App hub\n---\nInstalled apps \(2\)\n {2}envapp {2}local {2}- {2}~\/src\/envapp\n {2}weather|^App hub\n---\nInstalled apps \(1\)\n/);
    expect(app.body).toContain('Open app topics (');
    expect(app.body.split('\n').pop()).toBe('next: /open app:<name> · /install <source> --app · /uninstall <name>');
    expect((await d.run('tool', '/refresh')).body).toBe('Tool hub\n---\nInstalled tools (1)\n  tooly  local  1.2.0  ~/src/tooly\nnext: /open app:<name> · /install <source> --tool');
  });
});
