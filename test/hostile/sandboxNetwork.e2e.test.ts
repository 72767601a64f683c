import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { existsSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { call } from '../helpers/app.js';
import { kernelLandlockAbi, PROBE_DOC, run } from '../sandbox/support.js';
import { escapeSuite, output } from './sandboxSupport.js';

/*
 * behaviour.md §15.1, §15.2 and §15.5 on the built daemon: the network policy of `workspace` agents
 * through the egress proxy against loopback stub servers (tests never leave 127.0.0.1), a refusal
 * explained in the answer (the `loom sandbox: denied` line and head.meta.sandbox) for the network and
 * for files, /describe's guarantees, and a daemon that cannot make PID namespaces refusing by name.
 */

const { suite, reason } = escapeSuite('test/hostile/sandboxNetwork');

const started: RunningDaemon[] = [];
const stubs: Server[] = [];
let d: RunningDaemon;
let data = '';
let port = 0;
let otherPort = 0;
let hits = 0;
const homes: Record<string, string> = {};
const clients: Record<string, LoomClient> = {};

/** A loopback HTTP server answering `pong`; counts what reached it. */
async function stub(): Promise<number> {
  const s = createServer((_req, res) => {
    hits++;
    res.end('pong');
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  stubs.push(s);
  return (s.address() as { port: number }).port;
}

beforeAll(async () => {
  if (reason) return;
  port = await stub();
  otherPort = await stub();
  d = await startDaemon();
  started.push(d);
  data = realpathSync(d.dataDir);
  const policies: Record<string, unknown> = { pub: undefined, allow: { allow: [`127.0.0.1:${port}`] }, open: 'open', none: 'none' };
  for (const [id, network] of Object.entries(policies)) {
    clients[id] = new LoomClient(d.base, id);
    const r = await clients[id].registerAgent({ agent_id: id, sandbox: 'workspace', ...(network === undefined ? {} : { network }) });
    homes[id] = String(r.body.home);
  }
}, 30000);

afterAll(async () => {
  for (const x of started) await x.stop();
  for (const s of stubs) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** One /exec as an agent: ok, the whole body, what the command printed and head.meta. */
async function exec(id: string, line: string) {
  const r = await clients[id].exec('main', `/exec ${line}`);
  expect(r.status).toBe(200);
  return { ok: r.head?.ok, body: r.body ?? '', out: output(r.body ?? ''), meta: r.head?.meta ?? null };
}

suite('behaviour.md §15.1 /describe on a system that enforces all four guarantees', () => {
  it('when /describe is read, then every guarantee holds, nothing is missing and UDP is named open', async () => {
    expect((await call(d.base, 'GET', '/describe')).body.sandbox).toEqual({
      available: true, mechanism: 'landlock', abi: kernelLandlockAbi(), default: 'none',
      guarantees: { files: true, network: true, processes: true, terminals: true }, missing: [], udp: 'open',
    });
  });
});

suite('behaviour.md §15.2 network policy through the egress proxy', () => {
  it('public: when curl asks for a loopback address, then 403 with X-Loom-Denied and the sandbox body; the server saw nothing', async () => {
    const before = hits;
    const r = await exec('pub', `curl -sS -i http://127.0.0.1:${port}/`);
    expect(r.out).toMatch(/^HTTP\/1\.1 403 Forbidden\r?$/m);
    expect(r.out).toMatch(/^X-Loom-Denied: loopback address 127\.0\.0\.1\r?$/m);
    expect(r.out.trimEnd().split('\n').pop()).toBe(`loom sandbox: 127.0.0.1:${port} is not allowed for agent pub (network: public)`);
    expect(hits).toBe(before);
  });

  it('public: when the refused command fails, then its answer ends with the denial line and head.meta.sandbox names it', async () => {
    const r = await exec('pub', `curl -sSf http://127.0.0.1:${port}/`);
    expect(r.ok).toBe(false);
    expect(r.body.split('\n').pop()).toBe(`loom sandbox: denied 127.0.0.1:${port} (loopback address 127.0.0.1); allowed: ${homes.pub}, network public`);
    expect(r.meta).toEqual({ sandbox: { mode: 'workspace', denied: [{ kind: 'network', target: `127.0.0.1:${port}`, reason: 'loopback address 127.0.0.1' }] } });
  });

  it('public: when a name that resolves to loopback (localhost) is asked for through a CONNECT tunnel, then 403 with X-Loom-Denied', async () => {
    const r = await exec('pub', `curl -sS -i -p http://localhost:${port}/ 2>&1`);
    expect(r.out).toMatch(/CONNECT tunnel failed, response 403/);
    expect(r.out).toMatch(/^X-Loom-Denied: loopback address (127\.0\.0\.1|::1)\r?$/m);
  });

  it('allow: when curl asks for the listed loopback server, then it is reached through the proxy', async () => {
    const r = await exec('allow', `curl -sS http://127.0.0.1:${port}/`);
    expect(r).toMatchObject({ ok: true, out: 'pong', meta: null });
  });

  it('allow: when curl asks for a port outside the list, then 403 with X-Loom-Denied: not in allow list and the sandbox body', async () => {
    const before = hits;
    const r = await exec('allow', `curl -sS -i http://127.0.0.1:${otherPort}/`);
    expect(r.out).toMatch(/^X-Loom-Denied: not in allow list\r?$/m);
    expect(r.out.trimEnd().split('\n').pop()).toBe(`loom sandbox: 127.0.0.1:${otherPort} is not allowed for agent allow (network: allow 127.0.0.1:${port})`);
    expect(hits).toBe(before);
  });

  it('allow: when a host outside the list is refused and the command fails, then the denial line and meta.sandbox say so', async () => {
    const r = await exec('allow', `curl -sSf http://localhost:${port}/`);
    expect(r.body.split('\n').pop()).toBe(`loom sandbox: denied localhost:${port} (not in allow list); allowed: ${homes.allow}, network allow 127.0.0.1:${port}`);
    expect(r.meta).toEqual({ sandbox: { mode: 'workspace', denied: [{ kind: 'network', target: `localhost:${port}`, reason: 'not in allow list' }] } });
  });

  it('allow: when curl connects to the listed server directly (no proxy), then the kernel refuses it (exit 7)', async () => {
    expect((await exec('allow', `curl --noproxy '*' -sS http://127.0.0.1:${port}/ 2>&1; echo "exit=$?"`)).out).toMatch(/exit=7$/);
  });

  it('open: when curl connects directly, then it is reached as without the sandbox, and no proxy variables are set', async () => {
    const r = await exec('open', `env | grep -Eci '^(http|https|all|no|loom)_proxy='; curl --noproxy '*' -sS http://127.0.0.1:${port}/`);
    expect(r.out).toBe('0\npong');
  });

  it('none: when curl tries the server directly or through a proxy address, then nothing is reached and no proxy variables are set', async () => {
    const before = hits;
    const r = await exec('none', `env | grep -Eci '^(http|https|all|no|loom)_proxy='; curl --noproxy '*' -sS http://127.0.0.1:${port}/ 2>&1; echo "exit=$?"; curl -sS -x "http://127.0.0.1:$SVC_PORT" http://127.0.0.1:${port}/ 2>&1; echo "exit=$?"`);
    expect(r.out).toMatch(/^0\n/);
    expect(r.out).toMatch(/exit=7\n.*\nexit=7$/s);
    expect(hits).toBe(before);
  });
});

suite('behaviour.md §15.5 a refused file read is named in the answer', () => {
  it("when a workspace agent cats the daemon's agents.json, then the answer ends with the denial line and meta.sandbox has kind file", async () => {
    const r = await exec('pub', 'cat "$SVC_DATA_DIR/agents.json"');
    expect(r.out.split('\n')[0]).toBe(`cat: ${data}/agents.json: Permission denied`);
    expect(r.body.split('\n').pop()).toBe(`loom sandbox: denied ${data}/agents.json (outside the workspace); allowed: ${homes.pub}, network public`);
    expect(r.meta).toEqual({ sandbox: { mode: 'workspace', denied: [{ kind: 'file', target: `${data}/agents.json`, reason: 'outside the workspace' }] } });
  });

  it('when a confined command fails with nothing refused, then no line and no meta.sandbox are added', async () => {
    const r = await exec('pub', 'echo plain failure >&2; exit 3');
    expect(r).toMatchObject({ ok: false, out: 'plain failure', meta: null });
  });
});

suite('behaviour.md §15.1 a daemon that cannot make a private PID namespace refuses by name', () => {
  const REFUSED = "ERROR(SANDBOX_UNAVAILABLE): this system cannot enforce processes (no private PID namespace: user namespaces are turned off (LOOM_SANDBOX_NO_NAMESPACES=1)); the agent's commands were not run";
  let nd: RunningDaemon;
  const h: Record<string, string> = {};
  beforeAll(async () => {
    if (reason) return;
    nd = await startDaemon({ env: { LOOM_SANDBOX_NO_NAMESPACES: '1' } });
    started.push(nd);
    for (const [id, network] of [['w', undefined], ['wo', 'open'], ['n', undefined]] as const) {
      const r = await new LoomClient(nd.base, id).registerAgent({ agent_id: id, sandbox: id === 'n' ? 'none' : 'workspace', ...(network ? { network } : {}) });
      h[id] = String(r.body.home);
    }
    writeFileSync(join(h.w, 'probe.md'), PROBE_DOC);
    writeFileSync(join(h.w, 'probe.sh'), 'touch ran-cli\n');
  });

  it('when /describe is read, then processes is missing with its reason', async () => {
    const s = (await call(nd.base, 'GET', '/describe')).body.sandbox;
    expect(s.guarantees).toEqual({ files: true, network: true, processes: false, terminals: true });
    expect(s.missing).toEqual([{ guarantee: 'processes', reason: 'no private PID namespace: user namespaces are turned off (LOOM_SANDBOX_NO_NAMESPACES=1)' }]);
  });

  it.each([['w', 'main'], ['w', 'bash:t'], ['wo', 'main']])('when workspace agent %s runs /exec in %s, then SANDBOX_UNAVAILABLE names processes and nothing runs', async (id, topic) => {
    const c = new LoomClient(nd.base, id);
    expect(await run(c, topic, '/exec touch ran-exec')).toEqual({ ok: false, code: 'SANDBOX_UNAVAILABLE', body: REFUSED });
    expect(existsSync(join(h[id], 'ran-exec'))).toBe(false);
  });

  it('when the workspace agent runs a CLI action, then the same refusal and nothing runs', async () => {
    const c = new LoomClient(nd.base, 'w');
    expect((await run(c, 'doc', '/open ~/probe.md')).ok).toBe(true);
    expect(await run(c, 'doc', '/act.probe')).toEqual({ ok: false, code: 'SANDBOX_UNAVAILABLE', body: REFUSED });
    expect(existsSync(join(h.w, 'ran-cli'))).toBe(false);
  });

  it('when a none agent runs /exec on that daemon, then it runs', async () => {
    expect((await run(new LoomClient(nd.base, 'n'), 'main', '/exec echo fine')).body).toBe('exit: 0 | cwd: ~\n---\nfine');
  });
});
