import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { PROBE_DOC, run } from '../sandbox/support.js';
import { ACTS_AS_SELF, attempt, curlDaemon, escapeSuite, lastAnswer, NOT_FROM_INSIDE, output, type Channel } from './sandboxSupport.js';

/*
 * behaviour.md §15.3 on the built daemon, tried as an attacker would: a `workspace` agent's programs
 * read $SVC_PORT and call the daemon. A direct connection fails in the kernel; through the egress
 * proxy (curl takes HTTP_PROXY by itself) a request acts only as the agent itself, and routes that
 * change agents or the daemon are refused. After each refusal, the daemon is checked from outside:
 * nothing changed. The agent's own requests and the `loom` CLI keep working from inside.
 */

const { suite, reason } = escapeSuite('test/hostile/sandboxApi');

let d: RunningDaemon | undefined;
let a: LoomClient;
let c: LoomClient;
let home = '';
let cHome = '';

beforeAll(async () => {
  if (reason) return;
  d = await startDaemon();
  a = new LoomClient(d.base, 'a');
  c = new LoomClient(d.base, 'c');
  home = String((await a.registerAgent({ agent_id: 'a', sandbox: 'workspace' })).body.home);
  cHome = String((await c.registerAgent({ agent_id: 'c' })).body.home);
  expect((await a.registerAgent({ agent_id: 'victim' })).status).toBe(200);
  writeFileSync(join(home, 'probe.md'), PROBE_DOC);
  expect((await run(a, 'doc', '/open ~/probe.md')).ok).toBe(true);
  // c's running shell holds a variable: it is still there only if nobody closed the shell.
  expect((await run(c, 'bash:s', '/exec KEPT=still-here')).ok).toBe(true);
}, 30000);

afterAll(async () => {
  await d?.stop();
});

/** One shell line as agent a through /exec (its own output only). */
async function inside(line: string, channel: Channel = 'exec'): Promise<string> {
  return (await attempt(a, home, channel, line)).out;
}

/** One request to the daemon from inside: the status and body it got. */
async function fromInside(method: string, path: string, opts: Parameters<typeof curlDaemon>[2] = {}, channel: Channel = 'exec') {
  return lastAnswer(await inside(curlDaemon(method, path, opts), channel));
}

/** GET /agents from outside: id → the fields §15 is about. */
async function agentsNow(): Promise<Record<string, { sandbox: string; allowedPaths: string[] }>> {
  const list = (await a.listAgents()).body.agents as unknown as Array<{ id: string; sandbox: string; allowedPaths: string[] }>;
  return Object.fromEntries(list.map((x) => [x.id, { sandbox: x.sandbox, allowedPaths: x.allowedPaths }]));
}

suite('behaviour.md §15.3 no TCP connection to the daemon port from a workspace agent', () => {
  it.each<Channel>(['exec', 'bash', 'cli'])('%s: when curl connects to 127.0.0.1:$SVC_PORT directly, then it cannot connect (curl exit 7)', async (channel) => {
    expect(await inside("curl --noproxy '*' -sS -o /dev/null http://127.0.0.1:$SVC_PORT/health; echo \"exit=$?\"", channel)).toMatch(/exit=7$/);
  });

  it("when bash opens /dev/tcp to the daemon's port, then the kernel refuses it (Permission denied)", async () => {
    expect(await inside('exec 3<>/dev/tcp/127.0.0.1/$SVC_PORT && echo CONNECTED || echo refused')).toMatch(/\/dev\/tcp\/127\.0\.0\.1\/\d+: Permission denied\nrefused$/);
  });

  it("when the proxy is asked to CONNECT to the daemon's port, then 403 with X-Loom-Denied: daemon port", async () => {
    const out = await inside("curl -sS -i -p http://127.0.0.1:$SVC_PORT/health 2>&1; echo \"exit=$?\"");
    expect(out).toMatch(/^X-Loom-Denied: daemon port\r?$/m);
    expect(out).toMatch(/CONNECT tunnel failed, response 403/);
  });

  it("when the environment's proxy variables are removed, then the daemon is not reached at all (curl exit 7)", async () => {
    expect(await inside('env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS -o /dev/null http://127.0.0.1:$SVC_PORT/health; echo "exit=$?"')).toMatch(/exit=7$/);
  });

  it("when the proxy credential names another agent (a guess, or a's own secret), then 407 and nothing reaches the daemon", async () => {
    const out = await inside([
      'P=${LOOM_PROXY##*@}; S=${LOOM_PROXY#http://a:}; S=${S%@*}',
      'for u in "c:guess" "c:$S" "victim:$S"; do curl -sS -x "http://$u@$P" -w \' %{http_code}\\n\' http://127.0.0.1:$SVC_PORT/health; done',
    ].join('; '));
    expect(out).toBe(Array(3).fill('loom sandbox: proxy authentication required\n 407').join('\n'));
  });
});

suite('behaviour.md §15.3 through the proxy, a workspace agent acts only as itself', () => {
  it('when its own request names no agent, then it acts as itself', async () => {
    const r = await fromInside('POST', '/exec', { body: { topic: 'self', cmd: '/exec echo "me=$LOOM_AGENT_ID"' } });
    expect(r.status).toBe(200);
    expect(r.body).toContain('"agent_id":"a","topic":"self"');
    expect(r.body).toMatch(/me=a/);
  });

  it.each<Channel>(['exec', 'bash', 'cli'])('%s: when POST /exec says X-Agent-Id: c, then 403 acts only as itself and nothing ran as c', async (channel) => {
    const r = await fromInside('POST', '/exec', { header: 'X-Agent-Id: c', body: { topic: 'main', cmd: `/exec touch pwned-${channel}; cat "$SVC_DATA_DIR/agents.json"` } }, channel);
    expect(r).toEqual({ status: 403, body: ACTS_AS_SELF });
    expect(existsSync(join(cHome, `pwned-${channel}`))).toBe(false);
  });

  it('when the identity header is sent twice (a, then c), then 403 acts only as itself', async () => {
    expect(await fromInside('POST', '/exec', { header: 'X-Agent-Id: a', curl: "-H 'X-Agent-Id: c'", body: { topic: 'main', cmd: '/help' } })).toEqual({ status: 403, body: ACTS_AS_SELF });
  });

  it('when it switches itself to sandbox none, then 403 not allowed from inside and it stays workspace', async () => {
    expect(await fromInside('POST', '/agents', { body: { agent_id: 'a', sandbox: 'none' } })).toEqual({ status: 403, body: NOT_FROM_INSIDE });
    expect(await fromInside('POST', '/agents', { body: { agent_id: 'a', network: 'open' } })).toEqual({ status: 403, body: NOT_FROM_INSIDE });
    expect((await agentsNow()).a).toEqual({ sandbox: 'workspace', allowedPaths: [] });
  });

  it("when it widens its allowed_paths to the user's ~/.ssh, then 403 not allowed from inside and nothing is added", async () => {
    expect(await fromInside('POST', '/agents', { body: { agent_id: 'a', allowed_paths: [join(homedir(), '.ssh'), '/home'] } })).toEqual({ status: 403, body: NOT_FROM_INSIDE });
    expect((await agentsNow()).a.allowedPaths).toEqual([]);
  });

  it('when it registers a new agent with sandbox none, then 403 not allowed from inside and there is no such agent', async () => {
    expect(await fromInside('POST', '/agents', { body: { agent_id: 'newbie', sandbox: 'none' } })).toEqual({ status: 403, body: NOT_FROM_INSIDE });
    expect(await fromInside('POST', '/agents', { header: 'X-Agent-Id: a', body: { sandbox: 'none' } })).toEqual({ status: 403, body: NOT_FROM_INSIDE });
    expect(Object.keys(await agentsNow()).sort()).toEqual(['a', 'c', 'victim']);
  });

  it('when it mints a capability for agent c, then 403 acts only as itself and c has none', async () => {
    expect(await fromInside('POST', '/capabilities', { body: { agent_id: 'c' } })).toEqual({ status: 403, body: ACTS_AS_SELF });
    expect((await c.listCapabilities('c')).body.capabilities).toEqual([]);
  });

  it('when it deletes agent victim, then 403 not allowed from inside and victim is still there', async () => {
    expect(await fromInside('DELETE', '/agents/victim')).toEqual({ status: 403, body: NOT_FROM_INSIDE });
    expect(Object.keys(await agentsNow())).toContain('victim');
  });

  it("when it closes c's shell (DELETE /sessions/c/bash:s), then 403 acts only as itself and the shell runs on", async () => {
    expect(await fromInside('DELETE', '/sessions/c/bash:s')).toEqual({ status: 403, body: ACTS_AS_SELF });
    expect(output((await run(c, 'bash:s', '/exec echo "$KEPT"')).body)).toBe('still-here');
  });

  it('when it asks the daemon to shut down, then 403 not allowed from inside and the daemon answers on', async () => {
    expect(await fromInside('POST', '/shutdown')).toEqual({ status: 403, body: NOT_FROM_INSIDE });
    expect(d?.proc.exitCode).toBeNull();
    expect((await a.health()).status).toBe(200);
  });

  it.each([
    ['GET', '/sessions?agent_id=c'], ['GET', '/capabilities?agent_id=c'], ['GET', '/agents/c/events'], ['POST', '/agents/c/webhook'], ['GET', '/exec?agent_id=c'],
  ])('when %s %s names another agent, then 403 acts only as itself', async (method, path) => {
    expect(await fromInside(method, path)).toEqual({ status: 403, body: ACTS_AS_SELF });
  });

  it('when the body of POST /sessions names agent c, then 403 acts only as itself and c has no such topic', async () => {
    expect(await fromInside('POST', '/sessions', { body: { agent_id: 'c', topic: 'planted' } })).toEqual({ status: 403, body: ACTS_AS_SELF });
    expect(JSON.stringify((await c.listSessions('c')).body.sessions)).not.toContain('planted');
  });

  it.each([['GET', '/inspect/state'], ['GET', '/traces']])("when it reads the daemon's %s %s, then 403 not allowed from inside", async (method, path) => {
    expect(await fromInside(method, path)).toEqual({ status: 403, body: NOT_FROM_INSIDE });
  });

  it.each([
    ['POST', '/AGENTS', { agent_id: 'a', sandbox: 'none' }], ['POST', '/Agents/', { agent_id: 'a', allowed_paths: [join(homedir(), '.ssh')] }],
    ['DELETE', '/AGENTS/victim', undefined], ['GET', '/Inspect/state', undefined], ['POST', '/Shutdown/', undefined],
  ])('when the route is spelt %s %s (the router ignores case and a trailing slash), then 403 not allowed from inside', async (method, path, body) => {
    expect(await fromInside(method, path, body ? { body } : {})).toEqual({ status: 403, body: NOT_FROM_INSIDE });
    expect(await agentsNow()).toMatchObject({ a: { sandbox: 'workspace', allowedPaths: [] }, victim: { sandbox: 'none' } });
  });

  it.each([['/AGENTS/c/events'], ['/SESSIONS/c/bash:s']])('when %s names c in another spelling of the route, then 403 acts only as itself', async (path) => {
    expect(await fromInside(path.startsWith('/SESSIONS') ? 'DELETE' : 'GET', path)).toEqual({ status: 403, body: ACTS_AS_SELF });
    expect(output((await run(c, 'bash:s', '/exec echo "$KEPT"')).body)).toBe('still-here');
  });

  it('when LOOM_PROXY is used as the proxy explicitly, then the same rules hold', async () => {
    expect(await fromInside('POST', '/exec', { curl: '-x "$LOOM_PROXY"', header: 'X-Agent-Id: c', body: { topic: 'main', cmd: '/help' } })).toEqual({ status: 403, body: ACTS_AS_SELF });
  });
});

suite('behaviour.md §15.3 the loom CLI inside a confined shell', () => {
  const loom = `"${process.execPath}" "${join(process.cwd(), 'bin', 'loom.js')}"`;

  it('when loom --agent <self> t2 /help runs in a confined shell, then it answers with no setup', async () => {
    const out = await inside(`${loom} --agent a t2 /help; echo "exit=$?"`, 'bash');
    expect(out.split('\n')[0]).toBe('Loom commands');
    expect(out).toMatch(/\nexit=0$/);
  });

  it('when loom --agent c runs in a confined shell, then the daemon refuses it (acts only as itself) and exit 1', async () => {
    expect(await inside(`${loom} --agent c t2 /help; echo "exit=$?"`, 'bash')).toBe('loom: Forbidden: a sandboxed agent acts only as itself\nexit=1');
  });

  it('when loom runs with LOOM_PROXY emptied, then it cannot reach the daemon directly (exit 3, EACCES)', async () => {
    const out = await inside(`LOOM_PROXY= ${loom} --agent a t2 /help; echo "exit=$?"`, 'bash');
    expect(out).toMatch(/^loom: daemon not reachable .*EACCES/);
    expect(out).toMatch(/\nexit=3$/);
  });
});
