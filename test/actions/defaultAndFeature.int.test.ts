import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ActionInvoker, DefaultActionRunner } from '../../src/commands/docContract.js';
import { makeDefaultRunner } from '../../src/commands/actions/invoke.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { cli, context, doc, f, http, loaded, req, world, type World } from './helpers.js';
import { startStub, type Stub } from './stub.js';

let stub: Stub;
let w: World;

beforeAll(async () => {
  stub = await startStub();
  w = world();
});
afterAll(async () => { await stub.close(); });

describe('behaviour.md §4.13 default action runner', () => {
  const run = makeDefaultRunner();

  it('when the default action succeeds, then its content is returned (the part after the rule)', async () => {
    stub.routes.set('/home', { body: { name: 'Ann' } });
    const d = doc([http('home', 'GET', `${stub.origin}/home`, [], { template: ['Hello {Response.body.name}'] })], { defaultAction: 'home' });
    expect(await run(context(w), loaded(d))).toEqual({ ok: true, code: null, body: 'Hello Ann' });
  });

  it('when the default action has required fields without defaults, then it is not run and names them', async () => {
    const d = doc([cli('tr', 'touch /nonexistent/never', [req('text'), req('lang'), f('x', 'string', { required: true, default: 'd' })])], { defaultAction: 'tr' });
    expect(await run(context(w), loaded(d))).toEqual({
      ok: true, code: null, body: '[default] /act.tr not run — missing required: --text <string>, --lang <string>\nnext: /act.tr --help',
    });
  });

  it('when the default action fails, then the failure body is shown and the result stays ok', async () => {
    stub.routes.set('/down', { status: 503, body: 'maintenance' });
    const d = doc([http('down', 'GET', `${stub.origin}/down`)], { defaultAction: 'down' });
    expect(await run(context(w), loaded(d, { requirements: 'requirements.md' }))).toEqual({
      ok: true, code: null, body: `ERROR(HTTP_ERROR): HTTP 503 from GET ${stub.origin}/down\nmaintenance\nSetup: /open requirements.md`,
    });
  });

  it('when the default is a CLI action of a remote document, then the FORBIDDEN body is shown, ok', async () => {
    const d = doc([cli('c', 'echo hi')], { defaultAction: 'c' });
    const r = await run(context(w), loaded(d, { origin: 'web', display: 'https://x.test/a.md' }));
    expect(r).toEqual({ ok: true, code: null, body: 'ERROR(FORBIDDEN): CLI actions run only from local documents; https://x.test/a.md is a web page' });
  });

  it('when default: names no declared action, then nothing runs', async () => {
    expect(await run(context(w), loaded(doc([], { defaultAction: 'ghost' })))).toEqual({ ok: true, code: null, body: '' });
  });

  it('when the default uses defaults with $NAME from the config scope, then it resolves them (one-touch dashboards)', async () => {
    await w.env.set('leo', { app: 'weather', config: 'seoul' }, { CITY: 'seoul' });
    stub.routes.set('/wx/seoul', { body: 'Seoul: +21°C' });
    const d = doc([http('now', 'GET', `${stub.origin}/wx/{city}`, [f('city', 'string', { default: '$CITY' })], { template: ['{Response.body}'] })], { defaultAction: 'now' });
    expect((await run(context(w, 'app:weather:seoul'), loaded(d))).body).toBe('Seoul: +21°C');
  });
});

describe('actions feature wiring (docContract.ts) with the documents feature', () => {
  let app: TestApp;
  let home: string;

  beforeAll(async () => {
    app = await startApp();
    home = String((await app.client().registerAgent({ agent_id: 'leo' })).body.home);
    writeFileSync(join(home, 'greet.md'), [
      '# Greeter', '',
      '```act.greet', "CLI printf '%s|%s' {who} {more}", '  who: string (required) "Who"', '  more: string "More" = ""', '```', '',
      '```act.topics', 'CLI echo action', '```', '',
    ].join('\n'));
    expect((await app.client('leo').exec('main', '/open ~/greet.md')).head?.ok).toBe(true);
  });
  afterAll(async () => { await app.close(); });

  it('when the daemon is composed, then the invoker and the default runner are registered', () => {
    expect(typeof app.c.system.services.actions?.invoke).toBe('function');
    expect(typeof app.c.system.services.actions?.runDefault).toBe('function');
  });

  it.each([
    '/act.greet "Ann Lee" --more "line1\nline2"',
    '/act greet "Ann Lee" --more "line1\nline2"',
    '/action.greet "Ann Lee" --more "line1\nline2"',
    '/action greet "Ann Lee" --more "line1\nline2"',
    '/greet "Ann Lee" --more "line1\nline2"',
  ])('when the action is called as %j (the quoted value continues on the body line), then it runs with its arguments (spec §4.10 item 1)', async (cmd) => {
    const r = await app.client('leo').exec('main', cmd);
    expect([r.head?.ok, r.body]).toEqual([true, 'Ann Lee|line1\nline2']);
  });

  it('when an action id collides with a built-in command, then /<id> runs the built-in and /act.<id> the action', async () => {
    expect((await app.client('leo').exec('main', '/topics')).body?.startsWith('Topics of agent leo')).toBe(true);
    expect((await app.client('leo').exec('main', '/act.topics')).body).toBe('action');
  });

  it('when an action ran, then the current document and history are unchanged (spec §4.10 item 6)', async () => {
    const before = (await app.client('leo').exec('main', '/info')).body;
    await app.client('leo').exec('main', '/act.greet x');
    expect((await app.client('leo').exec('main', '/info')).body).toBe(before);
  });

  it('when a document with default: is opened, refreshed and returned to, then the default runs each time; a direct /act shows only the result', async () => {
    let hits = 0;
    stub.routes.set('/dash', () => ({ body: { n: ++hits } }));
    writeFileSync(join(home, 'dash.md'), ['---', 'default: dash', '---', '# Dash', '', '```act.dash', `GET ${stub.origin}/dash`, '```', '', '```act.dash.response', 'hits={Response.body.n}', '```', ''].join('\n'));
    writeFileSync(join(home, 'other.md'), '# Other\n');
    const c = app.client('leo');
    const opened = (await c.exec('dash', '/open ~/dash.md')).body ?? '';
    expect(opened.startsWith('Opened ~/dash.md\n---\n')).toBe(true);
    expect(opened.endsWith('\n\n---\n\nhits=1')).toBe(true);
    expect((await c.exec('dash', '/refresh')).body?.endsWith('\n\n---\n\nhits=2')).toBe(true);
    await c.exec('dash', '/open ~/other.md');
    expect((await c.exec('dash', '/back')).body?.endsWith('\n\n---\n\nhits=3')).toBe(true);
    expect((await c.exec('dash', '/act.dash')).body).toBe('hits=4');
    expect((await c.exec('dash', '/open ~/dash.md#dash')).body?.includes('hits=')).toBe(false);
  });

  it('when the registered invoker is called directly, then it answers help, missing-required and unknown ids', async () => {
    const invoke = app.c.system.services.actions?.invoke as ActionInvoker;
    const a = cli('search', 'echo', [req('query', 'string', { alias: 'q', description: 'Search terms' }), req('repo', 'tuple', { description: 'Repository' }),
      f('state', 'string', { alias: 's', description: 'Issue state', allowed: ['open', 'closed'], default: 'open' }), f('limit', 'number', { description: 'Max results', min: 1, max: 100, default: '20' }), f('verbose', 'boolean', { alias: 'v' })]);
    const r = await invoke(context(w), loaded(doc([a])), 'search', '--help');
    expect(r.body).toBe([
      'Action: search',
      '---',
      'Usage: /act.search <query> <repo> [--state <string>] [--limit <number>] [--verbose]',
      '  --query, -q <string>   required  Search terms',
      '  --repo <tuple>         required  Repository; @name-N from a list, or "a,b"',
      '  --state, -s <string>   optional  Issue state; one of open|closed; default "open"',
      '  --limit <number>       optional  Max results; min:1 max:100; default "20"',
      '  --verbose, -v          optional  boolean flag',
      'Positional order: query, repo',
      'Any field also accepts --<field>-file <path>.',
    ].join('\n'));
    expect(await invoke(context(w), loaded(doc([a])), 'search', '')).toEqual({
      ok: false, code: 'INVALID_ARGS',
      body: 'ERROR(INVALID_ARGS): Missing required: --query <string>, --repo <tuple>\nUsage: /act.search <query> <repo> [--state <string>] [--limit <number>] [--verbose]\nRecovery: /act.search --help',
    });
    expect(await invoke(context(w), loaded(doc([a])), 'nope', '')).toEqual({
      ok: false, code: 'NOT_FOUND', body: 'ERROR(NOT_FOUND): Action not found: nope\nActions: search\nRecovery: /act',
    });
    const runner = app.c.system.services.actions?.runDefault as DefaultActionRunner;
    expect((await runner(context(w), loaded(doc([a], { defaultAction: 'search' })))).body).toBe('[default] /act.search not run — missing required: --query <string>, --repo <tuple>\nnext: /act.search --help');
  });
});
