import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ActionInvoker } from '../../src/commands/docContract.js';
import { docsApp, type DocsApp } from './helpers.js';

const F = '```';
let d: DocsApp;
let n = 0;
let topic: string;
beforeAll(async () => {
  d = await docsApp();
  d.write('acts.md', [
    '# Acts', '', `${F}act.search`, 'GET https://x.test/s', '  query, -q: string (required) "Terms"', '  limit: number "Max" = "20"', F, '',
    `${F}act.open`, 'CLI echo collide', F, '', `${F}act.ping`, 'CLI echo pong', F, '',
  ].join('\n'));
  d.write('none.md', '# Nothing here\n');
  d.packages.addLocal(d.home, 'tools', { 'string.md': `# Tools\n\n${F}act.hello\nCLI echo hi\n  who: string "Who"\n${F}\n` });
});
afterAll(async () => { await d.close(); });
beforeEach(() => { topic = `a${++n}`; });

const HELP = [
  'Action: search', '---', 'Usage: /act.search <query> [--limit <number>]', '  --query, -q <string>   required  Terms', '  --limit <number>       optional  Max; default "20"',
  'Positional order: query', 'Any field also accepts --<field>-file <path>.',
].join('\n');

describe('/act listing (behaviour.md §2.6, §5.5)', () => {
  it('when the document declares actions, then /act and /act --help list them in declaration order', async () => {
    await d.run(topic, '/open ~/acts.md');
    const want = [
      'Actions of ~/acts.md (3)', '---', 'Usage: /act.search <query> [--limit <number>]', '  --query, -q <string>   required  Terms', '  --limit <number>       optional  Max; default "20"',
      'Positional order: query', '', 'Usage: /act.open', '  (no fields)', '', 'Usage: /act.ping', '  (no fields)', '', 'Any field also accepts --<field>-file <path>.',
    ].join('\n');
    expect((await d.run(topic, '/act')).body).toBe(want);
    expect((await d.run(topic, '/act --help')).body).toBe(want);
    expect((await d.run(topic, '/action')).body).toBe(want);
  });
  it('when the document declares no actions, then the listing says so', async () => {
    await d.run(topic, '/open ~/none.md');
    expect((await d.run(topic, '/act')).body).toBe('Actions of ~/none.md (0)\n---\nThis document declares no actions.');
  });
  it('when nothing is open in a tab, then INVALID_TARGET with a recovery; in an app topic the package root loads', async () => {
    expect((await d.run(topic, '/act')).body).toBe('ERROR(INVALID_TARGET): No document open.\nRecovery: /open <target>');
    const r = await d.run('app:tools', '/act');
    expect(r.body.split('\n')[0]).toBe('Actions of app:tools (1)');
    expect(r.meta?.title).toBe('Tools');
  });
  it('when the topic is a hub, then INVALID_TARGET', async () => {
    expect((await d.run('event', '/act')).body).toBe('ERROR(INVALID_TARGET): Hub topics show their page only; open documents in a tab or app topic.');
  });
});

describe('/act.<id> --help (spec §4.10.5; behaviour.md §5.3, §5.5)', () => {
  it.each(['/act.search --help', '/act search --help', '/action.search -h', '/action search x --help', '/search --help', '/act.SEARCH --help'])('when %s is sent, then the call interface shows', async (cmd) => {
    await d.run(topic, '/open ~/acts.md');
    expect((await d.run(topic, cmd)).body).toBe(HELP);
  });
  it('when the id is unknown, then NOT_FOUND lists the actions', async () => {
    await d.run(topic, '/open ~/acts.md');
    expect((await d.run(topic, '/act.nope --help')).body).toBe('ERROR(NOT_FOUND): Action not found: nope\nActions: search, open, ping\nRecovery: /act');
    await d.run(topic, '/open ~/none.md');
    expect((await d.run(topic, '/act.nope')).body).toBe('ERROR(NOT_FOUND): Action not found: nope\nThis document declares no actions.\nRecovery: /act');
  });
});

describe('invocation hand-off (behaviour.md §2.1 step 5, §5.1)', () => {
  it('when the actions feature is missing (a wiring bug), then invoking answers INTERNAL_ERROR', async () => {
    // The actions feature is always part of the build: take its invoker out for this case.
    const { services } = d.app.c.system;
    const saved = services.actions;
    delete services.actions;
    try {
      await d.run(topic, '/open ~/acts.md');
      for (const cmd of ['/act.search x', '/search x', '/act search x', '/action.ping']) {
        expect((await d.run(topic, cmd)).body).toBe('ERROR(INTERNAL_ERROR): Internal error: no action invoker is registered');
      }
    } finally {
      services.actions = saved;
    }
  });
  it('when the actions feature is present, then every spelling reaches it with the argument text (body included)', async () => {
    const calls: Array<[string, string, string]> = [];
    const { services } = d.app.c.system;
    const saved = services.actions;
    const invoke: ActionInvoker = async (_ctx, loaded, id, args) => {
      calls.push([loaded.display, id, args]);
      return { ok: true, code: null, body: `ran ${id}` };
    };
    services.actions = { invoke, runDefault: async () => ({ ok: true, code: null, body: '' }) };
    try {
      await d.run(topic, '/open ~/acts.md');
      expect((await d.run(topic, '/act.search "a b" --limit 3')).body).toBe('ran search');
      await d.run(topic, '/act search x\nmore "lines"');
      await d.run(topic, '/action.ping');
      await d.run(topic, '/ping -- --help');
      await d.run(topic, '/act.open');
      expect((await d.run('app:tools:cfg', '/hello --who me')).body).toBe('ran hello');
      expect(calls).toEqual([
        ['~/acts.md', 'search', '"a b" --limit 3'], ['~/acts.md', 'search', 'x\nmore "lines"'], ['~/acts.md', 'ping', ''], ['~/acts.md', 'ping', '-- --help'],
        ['~/acts.md', 'open', ''], ['app:tools', 'hello', '--who me'],
      ]);
    } finally {
      services.actions = saved;
    }
  });
  it('when an action id collides with a built-in word, then /<id> is the built-in and /act.<id> the action', async () => {
    await d.run(topic, '/open ~/acts.md');
    expect((await d.run(topic, '/open')).body.split('\n')[0]).toBe('Refreshed ~/acts.md');
    expect((await d.run(topic, '/act.open --help')).body.split('\n')[0]).toBe('Action: open');
  });
  it('when a word is neither built in nor an action, then COMMAND_UNSUPPORTED Unknown command', async () => {
    await d.run(topic, '/open ~/acts.md');
    expect((await d.run(topic, '/frobnicate')).body).toBe('ERROR(COMMAND_UNSUPPORTED): Unknown command: /frobnicate\nRecovery: /help lists the commands');
    expect((await d.run('app:notinstalled', '/frobnicate')).code).toBe('COMMAND_UNSUPPORTED');
  });
  it('when a hub gets an action-shaped word, then INVALID_TARGET', async () => {
    expect((await d.run('app', '/ping')).body).toBe('ERROR(INVALID_TARGET): Hub topics show their page only; open documents in a tab or app topic.');
  });
});

describe('app topics whose package is missing (behaviour.md §2.6, §3.8)', () => {
  it('when /act or /nav runs in an app topic without the package, then NOT_FOUND names the app', async () => {
    const want = "ERROR(NOT_FOUND): App 'ghost' is not installed.\nRecovery: /install <source> --app --as ghost";
    expect((await d.run('app:ghost', '/act')).body).toBe(want);
    expect((await d.run('app:ghost', '/nav')).body).toBe(want);
  });
});
