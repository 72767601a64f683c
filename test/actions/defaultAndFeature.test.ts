import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CURRENT_DOCUMENT_KEY, DEFAULT_ACTION_KEY, INVOKE_ACTION_KEY, type ActionInvoker, type CurrentDocumentProvider, type DefaultActionRunner, type LoadedDocument } from '../../src/commands/docContract.js';
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

describe('actions feature wiring (docContract.ts)', () => {
  let app: TestApp;
  let current: LoadedDocument | null = null;

  beforeAll(async () => {
    app = await startApp();
    const provider: CurrentDocumentProvider = async () => current;
    app.c.system.services.ext.set(CURRENT_DOCUMENT_KEY, provider);
    await app.client().registerAgent({ agent_id: 'leo' });
  });
  afterAll(async () => { await app.close(); });

  it('when the daemon is composed, then the invoker and the default runner are registered', () => {
    expect(typeof app.c.system.services.ext.get(INVOKE_ACTION_KEY)).toBe('function');
    expect(typeof app.c.system.services.ext.get(DEFAULT_ACTION_KEY)).toBe('function');
  });

  it('when /<id> names an action of the current document, then it runs through /exec with its arguments and body', async () => {
    current = loaded(doc([cli('greet', "printf '%s|%s' {who} {more}", [req('who'), f('more')])]));
    const r = await app.client('leo').exec('main', '/greet "Ann Lee" --more "line1\nline2"');
    expect(r.head?.ok).toBe(true);
    expect(r.body).toBe('Ann Lee|line1\nline2');
  });

  it('when /<id> is not an action of the current document, then the command is unknown', async () => {
    const r = await app.client('leo').exec('main', '/frobnicate');
    expect(r.body).toBe('ERROR(COMMAND_UNSUPPORTED): Unknown command: /frobnicate\nRecovery: /help lists the commands');
  });

  it('when an action id collides with a built-in command, then /<id> runs the built-in', async () => {
    current = loaded(doc([cli('topics', 'echo action')]));
    const r = await app.client('leo').exec('main', '/topics');
    expect(r.body?.startsWith('Topics of agent leo')).toBe(true);
  });

  it('when the registered invoker is called directly, then it behaves like /act.<id> (help included)', async () => {
    const invoke = app.c.system.services.ext.get(INVOKE_ACTION_KEY) as ActionInvoker;
    const a = cli('search', 'echo', [req('query', 'string', { alias: 'q', description: 'Search terms' }), req('repo', 'tuple', { description: 'Repository; @name-N from a list, or "a,b"' }),
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
    const runner = app.c.system.services.ext.get(DEFAULT_ACTION_KEY) as DefaultActionRunner;
    expect((await runner(context(w), loaded(doc([a], { defaultAction: 'search' })))).body).toBe('[default] /act.search not run — missing required: --query <string>, --repo <tuple>\nnext: /act.search --help');
  });
});
