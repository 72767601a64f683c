import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeInvoker, DEFAULT_LIMITS } from '../../src/commands/actions/invoke.js';
import { freePort } from '../helpers/daemon.js';
import { context, doc, f, http, loaded, req, world, type World, setVars } from './helpers.js';
import { startStub, type Stub } from './stub.js';
import type { ActionDef } from '../../src/sfmd/types.js';

let stub: Stub;
let w: World;
const invoke = makeInvoker({ http: { ...DEFAULT_LIMITS.http, timeoutMs: 1000, maxBytes: 4096 }, cli: DEFAULT_LIMITS.cli });

beforeAll(async () => {
  stub = await startStub();
  w = world(await freePort());
});
afterAll(async () => { await stub.close(); });

/** Call one action of a one-action local document. */
async function call(a: ActionDef, args = '', opts: { origin?: 'local' | 'web' | 'manifest'; topic?: string; requirements?: string; ctx?: ReturnType<typeof context> } = {}) {
  const c = opts.ctx ?? context(w, opts.topic ?? 'main');
  const l = loaded(doc([a]), { origin: opts.origin, requirements: opts.requirements });
  return invoke(c, l, a.id, args);
}

const names = () => stub.last().headers.map(([n]) => n.toLowerCase()).sort();

describe('behaviour.md §4.7 GET and DELETE', () => {
  it('when a GET action runs, then fields go to the query string and only Host and Connection are sent', async () => {
    stub.routes.set('/search', { body: { ok: 1 } });
    const a = http('s', 'GET', `${stub.origin}/search?count=3&format=%l:+%C`, [req('name'), f('lang', 'string', { default: 'en' }), f('empty', 'string', { default: '' }), f('given')]);
    const r = await call(a, 'Seoul --given=');
    expect(r).toEqual({ ok: true, code: null, body: '{"ok":1}' });
    expect(stub.last().method).toBe('GET');
    expect(stub.last().query).toBe('count=3&format=%l:+%C&name=Seoul&lang=en&given=');
    expect(names()).toEqual(['connection', 'host']);
    expect(stub.last().body).toBe('');
  });

  it('when a field fills a {param} path placeholder, then it is consumed, not repeated in the query', async () => {
    stub.routes.set('DELETE /items/a%20b', { status: 204 });
    const a = http('del', 'DELETE', `${stub.origin}/items/{id}`, [req('id'), f('force', 'boolean')]);
    const r = await call(a, '"a b" --force');
    expect(r).toEqual({ ok: true, code: null, body: '(empty response, HTTP 204)' });
    expect(stub.last().url).toBe('/items/a%20b?force=true');
    expect(names()).toEqual(['connection', 'host']);
  });

  it('when a URL query already has a parameter of a field name, then the field replaces it', async () => {
    stub.routes.set('/r', { body: 'x' });
    await call(http('r', 'GET', `${stub.origin}/r?limit=5&keep=1`, [f('limit', 'number', { default: '20' })]), '--limit 7');
    expect(stub.last().query).toBe('keep=1&limit=7');
  });

  it('when the URL is not absolute http(s), then INVALID_TARGET', async () => {
    expect(await call(http('u', 'GET', '{base}/x', [f('base', 'string', { default: 'ftp://x' })]))).toEqual({
      ok: false, code: 'INVALID_TARGET', body: 'ERROR(INVALID_TARGET): Action URL is not an absolute http(s) URL: ftp%3A%2F%2Fx/x',
    });
  });
});

describe('behaviour.md §4.7 POST, PUT, PATCH bodies and headers', () => {
  it('when POST has no body template, then a flat JSON object with typed values is sent with its content headers', async () => {
    stub.routes.set('POST /p/7', { status: 201, body: { id: 'n1' } });
    const a = http('p', 'POST', `${stub.origin}/p/{id}`, [req('id'), req('title'), f('n', 'number'), f('b', 'boolean'), f('t', 'tuple'), f('skip', 'string', { default: '' })]);
    const r = await call(a, '7 "A \\"T\\"" --n 1.5 --b no --t "x, y"');
    expect(r.ok).toBe(true);
    expect(JSON.parse(stub.last().body)).toEqual({ title: 'A "T"', n: 1.5, b: false, t: ['x', 'y'] });
    expect(stub.last().body).toBe('{"title":"A \\"T\\"","n":1.5,"b":false,"t":["x","y"]}');
    expect(names()).toEqual(['connection', 'content-length', 'content-type', 'host']);
    expect(stub.last().headers).toContainEqual(['Content-Type', 'application/json']);
    expect(stub.last().headers).toContainEqual(['Content-Length', String(Buffer.byteLength(stub.last().body))]);
  });

  it('when POST has no remaining fields, then {} is sent', async () => {
    stub.routes.set('POST /up/9', { body: { message: 'ok' } });
    await call(http('up', 'POST', `${stub.origin}/up/{post}`, [req('post')]), '9');
    expect(stub.last().body).toBe('{}');
  });

  it('when PUT has a body template and declared headers, then exactly those headers are sent with values substituted', async () => {
    await w.env.set('leo', {}, { TOKEN: 'sekret' });
    stub.routes.set('PUT /doc', { body: { ok: true } });
    const a = http('put', 'PUT', `${stub.origin}/doc`, [req('text'), f('lang', 'string', { default: 'en' })], {
      headers: [{ name: 'Authorization', value: 'Bearer $TOKEN' }, { name: 'X-Lang', value: '{lang}/{who}' }, { name: 'Content-Type', value: 'application/vnd.x+json' }],
      body: '{\n  "text": "{text}",\n  "lang": "{lang}"\n}',
    });
    const c = context(w);
    setVars(c, { who: 'ann' });
    await call(a, '"line1\nline \\"2\\""', { ctx: c });
    expect(JSON.parse(stub.last().body)).toEqual({ text: 'line1\nline "2"', lang: 'en' });
    expect(stub.last().headers).toEqual(expect.arrayContaining([['Authorization', 'Bearer sekret'], ['X-Lang', 'en/ann'], ['Content-Type', 'application/vnd.x+json']]));
    expect(names()).toEqual(['authorization', 'connection', 'content-length', 'content-type', 'host', 'x-lang']);
  });

  it('when PATCH sends a template that is not JSON, then Content-Type is text/plain; charset=utf-8', async () => {
    stub.routes.set('PATCH /t', { body: 'patched' });
    await call(http('t', 'PATCH', `${stub.origin}/t`, [req('v')], { body: 'value={v}' }), 'x');
    expect(stub.last().body).toBe('value=x');
    expect(stub.last().headers).toContainEqual(['Content-Type', 'text/plain; charset=utf-8']);
  });

  it('when a body modifier reads files in the workspace, then base64file and file insert the content', async () => {
    writeFileSync(join(w.home, 'pic.bin'), Buffer.from([1, 2, 3]));
    writeFileSync(join(w.home, 'note.txt'), 'He said "hi"');
    stub.routes.set('POST /m', { body: {} });
    await call(http('m', 'POST', `${stub.origin}/m`, [req('img'), req('note')], { body: '{"d":"{img|base64file}","n":"{note|file}","b":"{note|base64}"}' }), 'pic.bin ~/note.txt');
    expect(JSON.parse(stub.last().body)).toEqual({ d: 'AQID', n: 'He said "hi"', b: Buffer.from('~/note.txt').toString('base64') });
  });

  it('when a body modifier names a missing file or one outside the workspace, then nothing is sent', async () => {
    const before = stub.requests.length;
    const a = http('m', 'POST', `${stub.origin}/m`, [req('img')], { body: '{"d":"{img|base64file}"}' });
    expect(await call(a, 'nope.png')).toEqual({ ok: false, code: 'INVALID_ARGS', body: 'ERROR(INVALID_ARGS): Cannot read ~/nope.png for {img|base64file}: no such file\nRecovery: /act.m --help' });
    expect(await call(a, '/etc/hostname')).toEqual({ ok: false, code: 'FORBIDDEN', body: 'ERROR(FORBIDDEN): Path outside the workspace: /etc/hostname' });
    expect(stub.requests.length).toBe(before);
  });

  it('when a header value would contain a line break, then the call is refused before sending', async () => {
    const a = http('h', 'GET', `${stub.origin}/h`, [req('v')], { headers: [{ name: 'X-V', value: '{v}' }] });
    expect(await call(a, '"a\nInjected: 1"')).toEqual({ ok: false, code: 'INVALID_ARGS', body: 'ERROR(INVALID_ARGS): Header X-V would contain a line break or NUL\nRecovery: /act.h --help' });
  });
});

describe('behaviour.md §4.6 $NAME in HTTP definitions', () => {
  it('when $NAME is unset in the URL, then ENV_REQUIRED and nothing is sent', async () => {
    const before = stub.requests.length;
    const r = await call(http('w', 'GET', `${stub.origin}/w?k=$NOT_SET_ANYWHERE_X`));
    expect(r).toEqual({ ok: false, code: 'ENV_REQUIRED', body: 'ERROR(ENV_REQUIRED): $NOT_SET_ANYWHERE_X is not set; set it with /set $NOT_SET_ANYWHERE_X = "..."' });
    expect(stub.requests.length).toBe(before);
  });

  it('when $NAME is unset in a header (a credential), then ENV_REQUIRED and nothing is sent', async () => {
    const before = stub.requests.length;
    const a = http('w', 'GET', `${stub.origin}/w`, [], { headers: [{ name: 'Authorization', value: 'Bearer $NOTE_TOKEN' }] });
    expect(await call(a)).toEqual({ ok: false, code: 'ENV_REQUIRED', body: 'ERROR(ENV_REQUIRED): $NOTE_TOKEN is not set; set it with /set $NOTE_TOKEN = "..."' });
    expect(stub.requests.length).toBe(before);
    await w.env.set('leo', {}, { NOTE_TOKEN: 'tok-1' });
    stub.routes.set('/w', { body: 'fine' });
    expect(await call(a)).toEqual({ ok: true, code: null, body: 'fine' });
    expect(stub.last().headers).toContainEqual(['Authorization', 'Bearer tok-1']);
  });

  it('when $NAME is unset in the URL with a bad scheme as well, then ENV_REQUIRED names the real cause', async () => {
    expect(await call(http('w', 'GET', '$NOTES_API_BASE/notes'))).toMatchObject({ code: 'ENV_REQUIRED', body: 'ERROR(ENV_REQUIRED): $NOTES_API_BASE is not set; set it with /set $NOTES_API_BASE = "..."' });
  });

  it('when $NAME is unset in the body, then it is sent literally and the output warns; lower-case names are never reported', async () => {
    stub.routes.set('POST /w', { body: 'fine' });
    const r = await call(http('w', 'POST', `${stub.origin}/w?q=$lower`, [], { body: '{"k":"$NOT_SET_ANYWHERE_X"}' }));
    expect(stub.last().body).toBe('{"k":"$NOT_SET_ANYWHERE_X"}');
    expect(stub.last().query).toBe('q=$lower');
    expect(r.body).toBe('fine\nwarning: $NOT_SET_ANYWHERE_X is not set (sent literally); set it with /set $NOT_SET_ANYWHERE_X = "..."');
  });

  it('when the document is local, then the process environment is the last source', async () => {
    process.env.LOOM_TEST_PROCESS_VAR = 'from-process';
    await call(http('w', 'GET', `${stub.origin}/w?k=$LOOM_TEST_PROCESS_VAR&a=$LOOM_AGENT_ID&t=$LOOM_TOPIC`));
    expect(stub.last().query).toBe('k=from-process&a=leo&t=main');
  });

  it('when the document is remote, then only its app and config scopes resolve (§12 item 4)', async () => {
    await w.env.set('leo', {}, { GLOBAL_SECRET: 'g' });
    await w.env.set('leo', { app: 'wx' }, { APP_KEY: 'k1' });
    const before = stub.requests.length;
    const r = await call(http('w', 'GET', `${stub.origin}/w?g=$GLOBAL_SECRET&a=$APP_KEY`), '', { origin: 'web', topic: 'app:wx' });
    expect(r).toMatchObject({ ok: false, code: 'ENV_REQUIRED', body: 'ERROR(ENV_REQUIRED): $GLOBAL_SECRET is not set; set it with /set $GLOBAL_SECRET = "..."' });
    expect(stub.requests.length).toBe(before);
    await call(http('w', 'GET', `${stub.origin}/w?a=$APP_KEY`), '', { origin: 'web', topic: 'app:wx' });
    expect(stub.last().query).toBe('a=k1');
    stub.routes.set('POST /w', { body: 'fine' });
    const b = await call(http('w', 'POST', `${stub.origin}/w`, [], { body: '{"g":"$GLOBAL_SECRET","p":"$LOOM_TEST_PROCESS_VAR"}' }), '', { origin: 'web', topic: 'app:wx' });
    expect(stub.last().body).toBe('{"g":"$GLOBAL_SECRET","p":"$LOOM_TEST_PROCESS_VAR"}');
    expect(b.body).toContain('warning: $GLOBAL_SECRET is not set (sent literally)');
  });

  it('when the document declares an env: default, then it is used after the store and before the process environment', async () => {
    process.env.UNITS_X = 'from-process';
    const a = http('w', 'GET', `${stub.origin}/w?u=$UNITS_X&c=$CITY_X`);
    const l = loaded(doc([a], { env: [{ name: 'UNITS_X', default: 'metric', required: false }, { name: 'CITY_X', default: 'Paris', required: false }] }));
    await w.env.set('leo', {}, { CITY_X: 'Seoul' });
    await invoke(context(w), l, 'w', '');
    expect(stub.last().query).toBe('u=metric&c=Seoul');
    delete process.env.UNITS_X;
  });

  it('when a config topic sets a variable, then the config scope wins over app and global', async () => {
    await w.env.set('leo', { app: 'wx', config: 'seoul' }, { APP_KEY: 'k-seoul' });
    await call(http('w', 'GET', `${stub.origin}/w?a=$APP_KEY`), '', { topic: 'app:wx:seoul' });
    expect(stub.last().query).toBe('a=k-seoul');
  });
});

describe('behaviour.md §4.7 redirects, limits and failures', () => {
  it('when GET is redirected, then it is followed and declared headers go only to the same origin', async () => {
    const other = await startStub();
    try {
      other.routes.set('/final', { body: 'landed' });
      stub.routes.set('/hop1', { status: 302, headers: { Location: '/hop2' } });
      stub.routes.set('/hop2', { status: 307, headers: { Location: `${other.origin}/final` } });
      const r = await call(http('g', 'GET', `${stub.origin}/hop1`, [], { headers: [{ name: 'X-Secret', value: 's' }] }));
      expect(r.body).toBe('landed');
      expect(stub.last().headers).toContainEqual(['X-Secret', 's']);
      expect(other.last().headers.map(([n]) => n.toLowerCase()).sort()).toEqual(['connection', 'host']);
    } finally { await other.close(); }
  });

  it('when more than 5 redirects follow, then the 3xx is the result', async () => {
    stub.routes.set('/loop', (rq) => ({ status: 302, headers: { Location: `/loop?n=${Number(new URLSearchParams(rq.query).get('n') ?? 0) + 1}` } }));
    const before = stub.requests.length;
    const r = await call(http('g', 'GET', `${stub.origin}/loop`));
    expect(stub.requests.length - before).toBe(6);
    expect(r.body.split('\n')[0]).toBe(`ERROR(HTTP_ERROR): HTTP 302 from GET ${stub.origin}/loop`);
  });

  it('when POST gets a redirect, then it is not followed', async () => {
    stub.routes.set('POST /moved', { status: 303, headers: { Location: '/elsewhere' }, body: 'see other' });
    expect(await call(http('p', 'POST', `${stub.origin}/moved`))).toEqual({ ok: false, code: 'HTTP_ERROR', body: `ERROR(HTTP_ERROR): HTTP 303 from POST ${stub.origin}/moved\nsee other` });
  });

  it('when the server does not answer in time, then TIMEOUT with the exact text', async () => {
    stub.routes.set('/slow', { hang: true });
    expect(await call(http('slow', 'GET', `${stub.origin}/slow?x=1`))).toEqual({ ok: false, code: 'TIMEOUT', body: 'ERROR(TIMEOUT): /act.slow timed out after 1 s' });
  });

  it('when the connection is refused, then HTTP_ERROR Network error names method and URL without query', async () => {
    const port = await freePort();
    const r = await call(http('n', 'GET', `http://127.0.0.1:${port}/x?secret=1`));
    expect(r.code).toBe('HTTP_ERROR');
    expect(r.body).toMatch(new RegExp(`^ERROR\\(HTTP_ERROR\\): Network error: GET http://127.0.0.1:${port}/x: .*ECONNREFUSED`));
  });

  it('when the response is over the cap, then HTTP_ERROR exceeds 10 MiB', async () => {
    stub.routes.set('/big', { body: 'x'.repeat(5000) });
    expect(await call(http('b', 'GET', `${stub.origin}/big?q=1`))).toEqual({ ok: false, code: 'HTTP_ERROR', body: `ERROR(HTTP_ERROR): Response from GET ${stub.origin}/big exceeds 10 MiB` });
  });

  it('when a non-2xx has no template, then the first 2048 bytes follow, cut with …', async () => {
    stub.routes.set('/err', { status: 500, body: 'é'.repeat(1500) });
    const r = await call(http('e', 'GET', `${stub.origin}/err`), '', { requirements: './requirements.md' });
    const lines = r.body.split('\n');
    expect(lines[0]).toBe(`ERROR(HTTP_ERROR): HTTP 500 from GET ${stub.origin}/err`);
    expect(lines[1]).toBe(`${'é'.repeat(1024)}…`);
    expect(lines[2]).toBe('Setup: /open ./requirements.md');
  });

  it('when a non-2xx has a template, then the error line is followed by the rendered template', async () => {
    stub.routes.set('/nf', { status: 404, body: { message: 'no such post' } });
    const r = await call(http('nf', 'GET', `${stub.origin}/nf`, [], { template: ['Problem: {Response.body.message} ({Response.status})'] }));
    expect(r).toEqual({ ok: false, code: 'HTTP_ERROR', body: `ERROR(HTTP_ERROR): HTTP 404 from GET ${stub.origin}/nf\nProblem: no such post (404)` });
  });

  it('when a remote document targets the daemon port, then FORBIDDEN; a local one may', async () => {
    const a = http('self', 'GET', `http://127.0.0.1:${w.port}/health`);
    expect(await call(a, '', { origin: 'web' })).toEqual({ ok: false, code: 'FORBIDDEN', body: 'ERROR(FORBIDDEN): Remote documents may not call the Loom daemon' });
    expect(await call(http('self', 'GET', `http://localhost:${w.port}/x`), '', { origin: 'manifest' })).toMatchObject({ code: 'FORBIDDEN' });
    expect((await call(a)).code).toBe('HTTP_ERROR');
  });

  it('when a remote document is redirected to the daemon, then that hop is refused', async () => {
    stub.routes.set('/to-daemon', { status: 302, headers: { Location: `http://127.0.0.1:${w.port}/health` } });
    expect((await call(http('r', 'GET', `${stub.origin}/to-daemon`), '', { origin: 'web' })).code).toBe('FORBIDDEN');
  });

  it('when the topic is closed during the request, then CONFLICT', async () => {
    stub.routes.set('/hang2', { hang: true });
    const ctl = new AbortController();
    const p = call(http('h', 'GET', `${stub.origin}/hang2`), '', { ctx: context(w, 'main', { signal: ctl.signal }) });
    setTimeout(() => ctl.abort(), 50);
    expect(await p).toEqual({ ok: false, code: 'CONFLICT', body: 'ERROR(CONFLICT): Topic main was closed while this command ran' });
  });
});

describe('behaviour.md §4.9 results without a template', () => {
  it('when the response is HTML, then it is converted to Markdown', async () => {
    stub.routes.set('/html', { headers: { 'Content-Type': 'text/html' }, body: '<h1>Title</h1><p>Some <b>bold</b> text</p>' });
    expect((await call(http('h', 'GET', `${stub.origin}/html`))).body).toBe('# Title\n\nSome **bold** text');
  });

  it('when the response is binary, then the body reads (binary <n> bytes, <type>)', async () => {
    stub.routes.set('/png', { headers: { 'Content-Type': 'image/png' }, body: Buffer.from([137, 80, 78, 71]) });
    expect((await call(http('p', 'GET', `${stub.origin}/png`))).body).toBe('(binary 4 bytes, image/png)');
  });

  it('when the output is longer than 262144 bytes, then it is cut with a warning', async () => {
    const inv = makeInvoker({ http: { ...DEFAULT_LIMITS.http, maxBytes: 1 << 20 }, cli: DEFAULT_LIMITS.cli });
    stub.routes.set('/long', { body: 'y'.repeat(300000) });
    const a = http('l', 'GET', `${stub.origin}/long`);
    const r = await inv(context(w), loaded(doc([a])), 'l', '');
    expect(r.body.length).toBe(262144 + '\nwarning: output truncated to 262144 bytes'.length);
    expect(r.body.endsWith('\nwarning: output truncated to 262144 bytes')).toBe(true);
  });

  it('when an action ran, then {Response} of the session holds its result and the document state is untouched', async () => {
    stub.routes.set('/last', { body: { v: 1 } });
    const c = context(w);
    await call(http('last', 'GET', `${stub.origin}/last`), '', { ctx: c });
    expect(c.session.lastResponse).toMatchObject({ action: 'last', status: 200, body: '{"v":1}' });
    expect([c.session.doc, c.session.history.length]).toEqual([null, 0]);
  });
});
