import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bench, page, type CommandBench } from './support.js';

let b: CommandBench;
beforeAll(async () => { b = await bench(); });
afterAll(async () => { await b.close(); });

const USAGE = 'Usage: /set {name} = "value" or /set $NAME = "value"';
const envFile = (agentId: string) => join(b.t.dataDir, 'agents', agentId, 'state', 'env.json');
const readEnv = (agentId: string): unknown => JSON.parse(readFileSync(envFile(agentId), 'utf8'));

/** Rewrite the env file by hand and move its mtime forward so the change is seen whatever the clock resolution. */
function handEdit(agentId: string, text: string): void {
  const file = envFile(agentId);
  const before = statSync(file).mtimeMs;
  writeFileSync(file, text);
  const when = new Date(Math.max(before, Date.now()) + 5000);
  utimesSync(file, when, when);
}

describe('behaviour.md §6.4 /set session variables', () => {
  it('when {name} = "v" is set, then it is echoed in quotes', async () => {
    const r = await b.run('s1', '/set {city} = "Seoul"');
    expect(r).toMatchObject({ ok: true, code: null });
    expect(r.body).toBe('{city} = "Seoul"');
  });

  it('when a value is longer than 80 characters, then the echo is cut at 80 + …', async () => {
    const long = 'abcdefghij'.repeat(10);
    const r = await b.run('s1', `/set {long} = "${long}"`);
    expect(r.body).toBe(`{long} = "${long.slice(0, 80)}…"`);
    const exact = 'x'.repeat(80);
    expect((await b.run('s1', `/set {exact} = "${exact}"`)).body).toBe(`{exact} = "${exact}"`);
  });

  it('when a fenced block carries {name}, then the value spans lines and is echoed as (<n> lines)', async () => {
    const r = await b.run('s2', '/set\n```{notes}\none\n  two\nthree\n```');
    expect(r.body).toBe('{notes} = (3 lines)');
    const list = await b.run('s2', '/set');
    expect(list.body).toBe(page('Variables of s2', ['Session', '  {notes} = (3 lines)']));
  });

  it('when a fence is longer or uses tildes, then it closes only with the same character at least as long', async () => {
    const r = await b.run('s2', '/set\n~~~~{doc}\n```\n~~~\ninner\n~~~~~');
    expect(r.body).toBe('{doc} = (3 lines)');
  });

  it('when several assignments follow on body lines, then each is applied and echoed in order', async () => {
    const r = await b.run('s3', '/set {a} = 1\n{b} = "two"\n\n{c} =   three words  ');
    expect(r.body).toBe('{a} = "1"\n{b} = "two"\n{c} = "three words"');
  });

  it('when values are single- or double-quoted, then \\" and \\\\ are escapes only in double quotes', async () => {
    const r = await b.run('s3', '/set {d} = "say \\"hi\\" \\\\ ok"\n{s} = \'keep \\" as is\'\n{e} = ""');
    expect(r.body).toBe('{d} = "say "hi" \\ ok"\n{s} = "keep \\" as is"\n{e} = ""');
  });

  it('when session variables exist, then /set lists them sorted, in this topic only', async () => {
    const r = await b.run('s3', '/set');
    expect(r.body).toBe(page('Variables of s3', ['Session', '  {a} = "1"', '  {b} = "two"', '  {c} = "three words"', '  {d} = "say "hi" \\ ok"', '  {e} = ""', '  {s} = "keep \\" as is"']));
    expect((await b.run('s1', '/set')).body).not.toContain('{a}');
  });

  it('when a session value is over 1 MiB, then INVALID_ARGS and nothing is applied', async () => {
    const r = await b.run('s5', `/set {small} = 1\n{big} = ${'y'.repeat(1048577)}`);
    expect(r).toMatchObject({ ok: false, code: 'INVALID_ARGS' });
    expect((await b.run('s5', '/set')).body).toBe(page('Variables of s5', ['No variables in scope.']));
    expect((await b.run('s5', `/set {big} = ${'y'.repeat(1048576)}`)).ok).toBe(true);
  });

  it('when the session is deleted (DELETE /sessions), then its variables are gone', async () => {
    await b.run('s4', '/set {gone} = "soon"');
    const del = await b.t.client('leo').closeSession('leo', 's4');
    expect(del.status).toBe(200);
    expect((await b.run('s4', '/set')).body).toBe(page('Variables of s4', ['No variables in scope.']));
  });
});

describe('behaviour.md §6.4 /set errors: nothing is applied', () => {
  it('when a body line is invalid, then INVALID_ARGS names the line and an earlier valid line is not applied', async () => {
    const r = await b.run('bad', '/set {first} = "ok"\n$GOOD = "yes"\nnot an assignment');
    expect(r).toMatchObject({ ok: false, code: 'INVALID_ARGS' });
    expect(r.body).toBe(`ERROR(INVALID_ARGS): Invalid assignment on line 3: not an assignment\n${USAGE}`);
    expect((await b.run('bad', '/set')).body).toBe(page('Variables of bad', ['No variables in scope.']));
  });

  it.each([
    ['{x} = "unterminated', 'line 1: {x} = "unterminated'],
    ['x = 1', 'line 1: x = 1'],
    ['{1x} = 1', 'line 1: {1x} = 1'],
    ["{x} = 'a' trailing", "line 1: {x} = 'a' trailing"],
  ])('when the assignment is %j, then Invalid assignment on %s', async (line, where) => {
    const r = await b.run('bad', `/set ${line}`);
    expect(r.body).toBe(`ERROR(INVALID_ARGS): Invalid assignment on ${where}\n${USAGE}`);
  });

  it('when a fence is never closed, then the assignment is invalid', async () => {
    const r = await b.run('bad', '/set {ok} = 1\n```{open}\ntext');
    expect(r.body).toBe(`ERROR(INVALID_ARGS): Invalid assignment on line 2: \`\`\`{open}\n${USAGE}`);
    expect((await b.run('bad', '/set')).body).toBe(page('Variables of bad', ['No variables in scope.']));
  });
});

describe('behaviour.md §6.2–6.4 persistent variables and the env store', () => {
  let run: CommandBench['run'];
  let home: string;
  beforeAll(async () => { ({ run, home } = await b.agent('ava')); });

  it('when nothing is set, then /set lists No variables in scope.', async () => {
    expect((await run('main', '/set')).body).toBe(page('Variables of main', ['No variables in scope.']));
    expect(existsSync(envFile('ava'))).toBe(false);
  });

  it('when $NAME is set in a tab, hub or bash topic, then it goes to global and the value is not echoed', async () => {
    const r = await run('main', '/set $GEMINI_API_KEY = "AIzaSyD-0123456789abcdefghijklmnopqrstu"');
    expect(r).toMatchObject({ ok: true, body: '$GEMINI_API_KEY set (global)' });
    expect((await run('system', '/set $UNITS = imperial')).body).toBe('$UNITS set (global)');
    expect((await run('bash:b', "/set $SHELLY = 'x'")).body).toBe('$SHELLY set (global)');
  });

  it('when $NAME is set in app:<n> and app:<n>:<c>, then the app and config scopes are written', async () => {
    expect((await run('app:weather', '/set $UNITS = "metric"')).body).toBe('$UNITS set (app weather)');
    expect((await run('app:weather:seoul', '/set $CITY = "seoul"\n$ZONE = "Asia/Seoul"')).body)
      .toBe('$CITY set (config weather:seoul)\n$ZONE set (config weather:seoul)');
  });

  it('when values were set, then env.json has the documented shape, mode 0600, outside the home', async () => {
    const file = envFile('ava');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(file.startsWith(home + '/')).toBe(false);
    expect(readEnv('ava')).toEqual({
      version: 1,
      global: { GEMINI_API_KEY: 'AIzaSyD-0123456789abcdefghijklmnopqrstu', UNITS: 'imperial', SHELLY: 'x' },
      apps: { weather: { vars: { UNITS: 'metric' }, configs: { seoul: { CITY: 'seoul', ZONE: 'Asia/Seoul' } } } },
    });
  });

  it('when /set lists in app:<n>:<c>, then values are masked and resolved config → app → global, one per name', async () => {
    await run('app:weather:seoul', '/set {city} = "Seoul"\n```{notes}\na\nb\nc\n```');
    const r = await run('app:weather:seoul', '/set');
    expect(r.body).toBe(page('Variables of app:weather:seoul', [
      'Session',
      '  {city} = "Seoul"',
      '  {notes} = (3 lines)',
      'Persistent (config weather:seoul → app weather → global)',
      '  $CITY = "…" (5 chars, config weather:seoul)',
      '  $GEMINI_API_KEY = "AI…" (39 chars, global)',
      '  $SHELLY = "…" (1 chars, global)',
      '  $UNITS = "me…" (6 chars, app weather)',
      '  $ZONE = "As…" (10 chars, config weather:seoul)',
    ]));
  });

  it('when /set lists in app:<n> or a tab, then only that cascade is used', async () => {
    expect((await run('app:weather', '/set')).body).toBe(page('Variables of app:weather', [
      'Persistent (app weather → global)',
      '  $GEMINI_API_KEY = "AI…" (39 chars, global)',
      '  $SHELLY = "…" (1 chars, global)',
      '  $UNITS = "me…" (6 chars, app weather)',
    ]));
    expect((await run('main', '/set')).body).toBe(page('Variables of main', [
      'Persistent (global)',
      '  $GEMINI_API_KEY = "AI…" (39 chars, global)',
      '  $SHELLY = "…" (1 chars, global)',
      '  $UNITS = "im…" (8 chars, global)',
    ]));
  });

  it('when fenced blocks carry $NAME or a bare NAME, then both write persistent multi-line values', async () => {
    const r = await run('main', '/set\n```$PEM\n-----BEGIN-----\nabc\n-----END-----\n```\n```BARE\nl1\nl2\n```');
    expect(r.body).toBe('$PEM set (global)\n$BARE set (global)');
    const env = readEnv('ava') as { global: Record<string, string> };
    expect(env.global.PEM).toBe('-----BEGIN-----\nabc\n-----END-----');
    expect(env.global.BARE).toBe('l1\nl2');
  });

  it('when a valid persistent line precedes an invalid one, then the env file is not written', async () => {
    const before = readFileSync(envFile('ava'), 'utf8');
    const r = await run('main', '/set $NEW = "v"\n{ok} = 1\n$ = 2');
    expect(r.body).toBe(`ERROR(INVALID_ARGS): Invalid assignment on line 3: $ = 2\n${USAGE}`);
    expect(readFileSync(envFile('ava'), 'utf8')).toBe(before);
  });

  it('when a persistent value exceeds 64 KiB, then INVALID_ARGS and nothing is written', async () => {
    const before = readFileSync(envFile('ava'), 'utf8');
    const r = await run('main', `/set $SMALL = "s"\n$BIG = ${'x'.repeat(65537)}`);
    expect(r).toMatchObject({ ok: false, code: 'INVALID_ARGS' });
    expect(readFileSync(envFile('ava'), 'utf8')).toBe(before);
  });
});

describe('behaviour.md §6.2 hand edits of env.json', () => {
  let run: CommandBench['run'];
  beforeAll(async () => {
    ({ run } = await b.agent('hank'));
    await run('main', '/set $KEEP = "kept-value"');
  });

  it('when the human edits the file, then the next listing reads it (mtime changed)', async () => {
    handEdit('hank', JSON.stringify({ version: 1, global: { KEEP: 'kept-value', HAND: 'edited-by-human' }, apps: {} }));
    expect((await run('main', '/set')).body).toBe(page('Variables of main', [
      'Persistent (global)',
      '  $HAND = "ed…" (15 chars, global)',
      '  $KEEP = "ke…" (10 chars, global)',
    ]));
  });

  it('when the edit holds a non-string value, then it is ignored with a warning line', async () => {
    handEdit('hank', JSON.stringify({ version: 1, global: { KEEP: 'kept-value', HAND: 'edited-by-human', NUM: 42 }, apps: {} }));
    const lines = (await run('main', '/set')).body.split('\n');
    expect(lines.slice(0, 5)).toEqual(['Variables of main', '---', 'Persistent (global)', '  $HAND = "ed…" (15 chars, global)', '  $KEEP = "ke…" (10 chars, global)']);
    expect(lines).toHaveLength(6);
    expect(lines[5]).toMatch(/^warning: .*NUM/);
  });

  it('when the edit is not valid JSON, then the last good copy stays in use and the listing warns', async () => {
    handEdit('hank', '{ "version": 1, "global": { oops');
    expect((await run('main', '/set')).body).toBe(page('Variables of main', [
      'Persistent (global)',
      '  $HAND = "ed…" (15 chars, global)',
      '  $KEEP = "ke…" (10 chars, global)',
      `warning: ${envFile('hank')} is not valid JSON; using the last good copy`,
    ]));
  });
});

describe('behaviour.md §6.5 /unset', () => {
  let run: CommandBench['run'];
  beforeAll(async () => {
    ({ run } = await b.agent('una'));
    await run('app:weather:seoul', '/set $A = "1"\n$C = "3"\n{b} = "2"');
    await run('app:weather', '/set $A = "app-level"');
  });

  it('when no names are given, then INVALID_ARGS with the usage', async () => {
    const r = await run('app:weather:seoul', '/unset');
    expect(r).toMatchObject({ ok: false, code: 'INVALID_ARGS' });
    expect(r.body).toBe('ERROR(INVALID_ARGS): Usage: /unset $NAME | {name} …');
    expect((await run('app:weather:seoul', '/unset A')).body).toBe('ERROR(INVALID_ARGS): Usage: /unset $NAME | {name} …');
  });

  it('when a persistent name is absent from the write scope, then NOT_FOUND and nothing is removed', async () => {
    const r = await run('app:weather:seoul', '/unset $C {b} $MISSING');
    expect(r).toMatchObject({ ok: false, code: 'NOT_FOUND' });
    expect(r.body).toBe('ERROR(NOT_FOUND): $MISSING is not set in config weather:seoul');
    const list = (await run('app:weather:seoul', '/set')).body;
    expect(list).toContain('  {b} = "2"');
    expect(list).toContain('  $C = "…" (1 chars, config weather:seoul)');
  });

  it('when a session name is absent, then NOT_FOUND and nothing is removed', async () => {
    const r = await run('app:weather:seoul', '/unset $C {nope}');
    expect(r).toMatchObject({ ok: false, code: 'NOT_FOUND' });
    expect((await run('app:weather:seoul', '/set')).body).toContain('  $C = "…" (1 chars, config weather:seoul)');
  });

  it('when names are present, then each is removed from the scope /set writes to, one line each', async () => {
    const r = await run('app:weather:seoul', '/unset $A {b} $C');
    expect(r).toMatchObject({ ok: true, code: null });
    expect(r.body).toBe('Unset $A (config weather:seoul)\nUnset {b}\nUnset $C (config weather:seoul)');
    expect((await run('app:weather:seoul', '/set')).body).toBe(page('Variables of app:weather:seoul', [
      'Persistent (config weather:seoul → app weather → global)',
      '  $A = "ap…" (9 chars, app weather)',
    ]));
  });

  it('when the name was only visible through the cascade, then it is not set in this scope', async () => {
    const r = await run('app:weather:seoul', '/unset $A');
    expect(r.body).toBe('ERROR(NOT_FOUND): $A is not set in config weather:seoul');
    expect((await run('main', '/unset $A')).body).toBe('ERROR(NOT_FOUND): $A is not set in global');
    expect((await run('app:weather', '/unset $A')).body).toBe('Unset $A (app weather)');
  });
});
