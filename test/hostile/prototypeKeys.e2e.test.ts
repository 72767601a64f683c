import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { raw } from '../helpers/app.js';
import type { RunningDaemon } from '../helpers/daemon.js';
import { alive, Daemons, exec, json, LEGAL_PROTO_IDS, mcpCall, PROTO_KEYS, toolText } from './support.js';

/**
 * Every table keyed by user text is a Map or a null-prototype object.
 * `__proto__`, `constructor`, `prototype`, `toString`, `hasOwnProperty` and `valueOf` are fed as
 * agent ids (where legal), topic segments, app and config names, variable names, field names,
 * shortcut names, command words, header names and JSON keys; the daemon stays up and every answer
 * is the one an ordinary name would get.
 */

const daemons = new Daemons();
let d: RunningDaemon;
let captured: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
let sink: Server;
let sinkPort = 0;

const FIELDS = PROTO_KEYS.map((k) => `  ${k}: string (required)`).join('\n');
const PROBE = (port: number) => `# probe

\`\`\`act.show
CLI echo "token=$MAIL_TOKEN"
\`\`\`

\`\`\`act.fields
CLI printf '%s|' ${PROTO_KEYS.map((k) => `{${k}}`).join(' ')}
${FIELDS}
\`\`\`

\`\`\`act.post
POST http://127.0.0.1:${port}/capture -H "X-A: [$toString]"
${FIELDS}
\`\`\`

\`\`\`act.paths
GET http://127.0.0.1:${port}/capture
\`\`\`

\`\`\`act.paths.response
[{Response.body.constructor}] [{Response.body.toString}] [{Response.constructor}]
\`\`\`

\`\`\`act.envs
CLI printf '%s|' "$__proto__" "$constructor" "$toString"
\`\`\`
`;

beforeAll(async () => {
  sink = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      captured.push({ headers: req.headers, body });
      res.setHeader('Content-Type', 'application/json');
      res.end('{}');
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
  sinkPort = (sink.address() as { port: number }).port;
  d = await daemons.start();
  for (const a of ['alice', 'bob']) expect((await json(d.base, 'POST', '/agents', { agent_id: a })).status).toBe(200);
  const bobHome = (await json(d.base, 'GET', '/agents')).body.agents as Array<{ id: string; home: string }>;
  writeFileSync(join(bobHome.find((a) => a.id === 'bob')!.home, 'probe.md'), PROBE(sinkPort));
});

afterAll(async () => {
  await daemons.killAll();
  await new Promise<void>((r) => (sink ? sink.close(() => r()) : r()));
});

describe('env scopes named after Object.prototype members', () => {
  it('when alice stores a secret in app:mail:constructor, then bob in app:x:constructor does not see it, and alice keeps it across a restart', async () => {
    const set = await exec(d.base, 'alice', 'app:mail:constructor', '/set $MAIL_TOKEN = "alice-secret-42"');
    expect(set.body).toBe('$MAIL_TOKEN set (config mail:constructor)');
    expect((await exec(d.base, 'bob', 'app:x:constructor', '/open ~/probe.md')).head?.ok).toBe(true);
    const leak = await exec(d.base, 'bob', 'app:x:constructor', '/act.show');
    expect(leak.body).toBe('token=');
    const file = JSON.parse(readFileSync(join(d.dataDir, 'agents', 'alice', 'state', 'env.json'), 'utf8')) as { apps: Record<string, { configs: Record<string, Record<string, string>> }> };
    expect(Object.hasOwn(file.apps.mail.configs, 'constructor')).toBe(true);
    expect(file.apps.mail.configs.constructor).toEqual({ MAIL_TOKEN: 'alice-secret-42' });
    await d.stop();
    d = await daemons.start({ dataDir: d.dataDir });
    const list = await exec(d.base, 'alice', 'app:mail:constructor', '/set');
    expect(list.body).toContain('$MAIL_TOKEN = "al…" (15 chars, config mail:constructor)');
  });

  it.each(['toString', 'valueOf', 'hasOwnProperty', 'constructor', 'prototype'])('when the topic is app:%s, then /set writes and lists the app scope (no INTERNAL_ERROR)', async (k) => {
    const set = await exec(d.base, 'alice', `app:${k}`, '/set $A = "1"');
    expect(set.body).toBe(`$A set (app ${k})`);
    const list = await exec(d.base, 'alice', `app:${k}`, '/set');
    expect(list.head?.ok).toBe(true);
    expect(list.body).toContain(`$A = "…" (1 chars, app ${k})`);
    expect((await exec(d.base, 'alice', `app:${k}`, '/unset $A')).body).toBe(`Unset $A (app ${k})`);
  });
});

describe('names that reach Object.prototype never change the daemon', () => {
  it.each(LEGAL_PROTO_IDS.flatMap((k) => [`app:x:${k}`, `app:${k}:${k}`].map((t) => [t])))('when %s sets $keys, $entries and $assign, then the daemon stays up and later calls still work', async (topic) => {
    const r = await exec(d.base, 'bob', topic, '/set $keys = "1"\n$entries = "2"\n$assign = "3"');
    expect(r.head?.ok).toBe(true);
    expect((await exec(d.base, 'bob', 'main', '/help set')).head?.ok).toBe(true);
    const m = await mcpCall(d.base, 'bob', { topic, cmd: '/set $keys = "4"' });
    expect(m.status).toBe(200);
    expect(toolText(m.json)?.isError).toBe(false);
    expect(await alive(d)).toBe(true);
  });

  it.each(PROTO_KEYS.map((k) => [k]))('when %s is a $NAME and a {name}, then /set, the listing and /unset treat it as an ordinary name', async (k) => {
    const set = await exec(d.base, 'bob', 'app:v:w', `/set $${k} = "persist"\n{${k}} = "session"`);
    expect(set.body).toBe(`$${k} set (config v:w)\n{${k}} = "session"`);
    const list = await exec(d.base, 'bob', 'app:v:w', '/set');
    expect(list.body).toContain(`{${k}} = "session"`);
    expect(list.body).toContain(`$${k} = "pe…" (7 chars, config v:w)`);
    expect((await exec(d.base, 'bob', 'app:v:w', `/unset $${k} {${k}}`)).body).toBe(`Unset $${k} (config v:w)\nUnset {${k}}`);
    expect((await exec(d.base, 'bob', 'app:v:w', `/unset $${k}`)).body).toBe(`ERROR(NOT_FOUND): $${k} is not set in config v:w`);
  });

  it.each(LEGAL_PROTO_IDS.map((k) => [k]))('when %s is an agent id, then it registers, lists, runs commands and deletes like any id', async (k) => {
    const reg = await json(d.base, 'POST', '/agents', { agent_id: k, webhook: true });
    expect(reg.status).toBe(200);
    expect(reg.body.created).toBe(true);
    expect(((await json(d.base, 'GET', '/agents')).body.agents as Array<{ id: string }>).map((a) => a.id)).toContain(k);
    expect((await exec(d.base, k, k, '/set $X = "1"')).body).toBe('$X set (global)');
    const hook = await fetch(String(reg.body.webhook_url), { method: 'POST', body: 'hello' });
    expect(hook.status).toBe(202);
    expect((await exec(d.base, k, 'event', '/events')).body).toContain('hello');
    expect((await json(d.base, 'DELETE', `/agents/${k}`)).body).toMatchObject({ agent_id: k, deleted: true });
    expect((await json(d.base, 'DELETE', `/agents/${k}`)).body).toMatchObject({ agent_id: k, deleted: false });
  });

  it('when __proto__ is an agent id, then POST /agents answers 400 Invalid agent_id and /mcp 400 too', async () => {
    expect(await json(d.base, 'POST', '/agents', { agent_id: '__proto__' })).toEqual({ status: 400, body: { error: 'Invalid agent_id: __proto__' } });
    expect((await mcpCall(d.base, '__proto__', { topic: 'main', cmd: '/help' })).status).toBe(400);
  });

  it.each(LEGAL_PROTO_IDS.map((k) => [k]))('when %s is a command word, a help topic or a bash topic, then the answers are the ordinary ones', async (k) => {
    expect((await exec(d.base, 'bob', 'main', `/${k}`)).body).toBe(`ERROR(COMMAND_UNSUPPORTED): Unknown command: /${k.toLowerCase()}\nRecovery: /help lists the commands`);
    expect((await exec(d.base, 'bob', 'main', `/help ${k}`)).body).toBe(`ERROR(NOT_FOUND): No help for /${k.toLowerCase()}`);
    expect((await exec(d.base, 'bob', `bash:${k}`, '/exec echo hi')).body).toBe('exit: 0 | cwd: ~\n---\nhi');
    expect((await exec(d.base, 'bob', k, '/info')).head?.topic).toBe(k);
  });

  it('when field names are prototype names, then CLI and HTTP actions get every value (flat JSON body included)', async () => {
    await exec(d.base, 'bob', 'fields', '/open ~/probe.md');
    const args = PROTO_KEYS.map((k, i) => `--${k} v${i}`).join(' ');
    expect((await exec(d.base, 'bob', 'fields', `/act.fields ${args}`)).body).toBe('v0|v1|v2|v3|v4|v5|');
    captured = [];
    expect((await exec(d.base, 'bob', 'fields', `/act.post ${args}`)).head?.ok).toBe(true);
    const body = JSON.parse(captured[0].body) as Record<string, string>;
    expect(Object.keys(body)).toEqual([...PROTO_KEYS]);
    expect(PROTO_KEYS.map((k) => Object.getOwnPropertyDescriptor(body, k)?.value)).toEqual(['v0', 'v1', 'v2', 'v3', 'v4', 'v5']);
    expect(captured[0].headers['x-a']).toBe('[$toString]');
  });

  it('when a template reads Response.body.constructor of {}, then it stays unresolved with a warning', async () => {
    await exec(d.base, 'bob', 'paths', '/open ~/probe.md');
    const r = await exec(d.base, 'bob', 'paths', '/act.paths');
    expect(r.body?.split('\n')).toEqual([
      '[{Response.body.constructor}] [{Response.body.toString}] [{Response.constructor}]',
      'warning: unresolved template reference {Response.body.constructor}; Response.body has no keys',
      'warning: unresolved template reference {Response.body.toString}; Response.body has no keys',
      'warning: unresolved template reference {Response.constructor}; available: Response.status, Response.body',
    ]);
  });

  it('when stored variables are named __proto__, constructor and toString, then a CLI action gets them exported', async () => {
    await exec(d.base, 'bob', 'envs', '/set $__proto__ = "p"\n$constructor = "c"\n$toString = "t"');
    await exec(d.base, 'bob', 'envs', '/open ~/probe.md');
    expect((await exec(d.base, 'bob', 'envs', '/act.envs')).body).toBe('p|c|t|');
  });

  it.each(LEGAL_PROTO_IDS.map((k) => [k]))('when @%s is a shortcut, then it is unknown (NOT_FOUND), not a prototype member', async (k) => {
    const r = await exec(d.base, 'bob', 'fields', `/act.fields @${k} b c d e f`);
    expect(r.body?.split('\n')[0]).toBe(`ERROR(NOT_FOUND): Unknown shortcut: @${k}`);
  });

  it('when JSON bodies carry __proto__ keys, then they are ordinary unknown fields', async () => {
    const agent = await json(d.base, 'POST', '/agents', '{"agent_id":"j1","__proto__":{"home":"/","webhook":true}}');
    expect(agent.status).toBe(200);
    expect(agent.body.home).toBe(join(d.dataDir, 'agents', 'j1', 'home'));
    expect(agent.body.webhook_url).toBeUndefined();
    const ex = await json(d.base, 'POST', '/exec', '{"__proto__":{"cmd":"/help","topic":"main"}}', { 'X-Agent-Id': 'j1' });
    expect(ex).toEqual({ status: 400, body: { error: 'Empty command — provide a non-empty "cmd"' } });
    const cap = await json(d.base, 'POST', '/capabilities', '{"agent_id":"j1","__proto__":{"verbs":["GET"],"ttl_ms":1000}}');
    expect(cap).toEqual({ status: 400, body: { error: 'Invalid capability', message: 'verbs must be a non-empty array' } });
    const m = await mcpCall(d.base, 'j1', JSON.parse('{"__proto__":{"topic":"main","cmd":"/help"}}'));
    expect(m.status).toBe(200);
    expect(toolText(m.json)?.isError ?? (m.json as { error?: unknown }).error !== undefined).toBe(true);
  });

  it('when request headers are named after prototype members, then they are ignored', async () => {
    const headers: Record<string, string> = Object.fromEntries(PROTO_KEYS.map((k) => [k, 'x']));
    const r = await raw(d.port, { method: 'POST', path: '/exec', headers: { ...headers, 'X-Agent-Id': 'bob', 'Content-Type': 'application/json' }, body: '{"cmd":"/help set","topic":"main"}' });
    expect(r.status).toBe(200);
    expect(await alive(d)).toBe(true);
    expect(d.stderr()).not.toMatch(/TypeError/);
  });
});
