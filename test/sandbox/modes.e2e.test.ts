import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { call } from '../helpers/app.js';
import { runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { PROBE_DOC, run } from './support.js';

/*
 * behaviour.md §15 modes on the built daemon, independent of the kernel: the `sandbox` field of
 * POST/GET /agents, the daemon default, the CLI, /describe and the inspector, and the fail-closed
 * answer where Landlock is missing (simulated with LOOM_SANDBOX_ABI_MAX=0).
 */

const UNAVAILABLE = "ERROR(SANDBOX_UNAVAILABLE): this kernel has no Landlock; the agent's commands were not run";
const started: RunningDaemon[] = [];

async function daemon(opts: Parameters<typeof startDaemon>[0] = {}): Promise<RunningDaemon> {
  const d = await startDaemon(opts);
  started.push(d);
  return d;
}

afterAll(async () => {
  for (const d of started) {
    await d.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  }
});

describe('behaviour.md §15 the sandbox field of POST and GET /agents', () => {
  let d: RunningDaemon;
  beforeAll(async () => { d = await daemon(); });

  it('when sandbox is given, then GET /agents shows it; omitted, the stored mode is kept; a new agent gets the default none', async () => {
    expect((await call(d.base, 'POST', '/agents', { body: { agent_id: 'w', sandbox: 'workspace' } })).status).toBe(200);
    expect((await call(d.base, 'POST', '/agents', { body: { agent_id: 'w' } })).status).toBe(200);
    expect((await call(d.base, 'POST', '/agents', { body: { agent_id: 'n' } })).status).toBe(200);
    const list = (await call(d.base, 'GET', '/agents')).body.agents as Array<{ id: string; sandbox: string }>;
    expect(list.map((a) => [a.id, a.sandbox])).toEqual([['n', 'none'], ['w', 'workspace']]);
  });

  it.each([['bad'], [1], [true], [['workspace']], ['Workspace']])('when sandbox is %j, then 400 with a clear error and nothing is stored', async (v) => {
    const r = await call(d.base, 'POST', '/agents', { body: { agent_id: 'x', sandbox: v } });
    expect(r).toMatchObject({ status: 400, body: { error: 'sandbox must be "none" or "workspace"' } });
    expect(((await call(d.base, 'GET', '/agents')).body.agents as Array<{ id: string }>).some((a) => a.id === 'x')).toBe(false);
  });

  it('when the inspector snapshot is read, then each agent shows its mode', async () => {
    const s = (await call(d.base, 'GET', '/inspect/state')).body as { agents: Array<{ agent_id: string; sandbox: string }> };
    expect(s.agents.filter((a) => a.agent_id === 'w' || a.agent_id === 'n').map((a) => [a.agent_id, a.sandbox])).toEqual([['n', 'none'], ['w', 'workspace']]);
  });

  it('when loom agent add --sandbox workspace runs, then loom agent list shows the mode', async () => {
    const env = { SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir };
    expect((await runCli(['agent', 'add', 'cli-w', '--sandbox', 'workspace'], env)).code).toBe(0);
    const list = await runCli(['agent', 'list'], env);
    expect(list.stdout.split('\n').find((l) => l.trim().startsWith('cli-w'))).toMatch(/sandbox: workspace/);
    expect((await runCli(['agent', 'list', '--json'], env)).stdout).toContain('"sandbox": "workspace"');
  });
});

describe('behaviour.md §15 the daemon default', () => {
  it('when the daemon runs with --sandbox workspace, then a new agent is workspace and /describe says the default', async () => {
    const d = await daemon({ args: ['--sandbox', 'workspace'] });
    await call(d.base, 'POST', '/agents', { body: { agent_id: 'a' } });
    expect(((await call(d.base, 'GET', '/agents')).body.agents as Array<{ sandbox: string }>)[0].sandbox).toBe('workspace');
    expect((await call(d.base, 'GET', '/describe')).body.sandbox).toMatchObject({ mechanism: 'landlock', default: 'workspace' });
  });

  it('when SVC_SANDBOX=workspace, then that is the default', async () => {
    const d = await daemon({ env: { SVC_SANDBOX: 'workspace' } });
    expect((await call(d.base, 'GET', '/describe')).body.sandbox.default).toBe('workspace');
  });

  it('when SVC_SANDBOX or --sandbox has another value, then the daemon exits 2 naming it', async () => {
    const dir = tempDir();
    try {
      const env = { SVC_DATA_DIR: dir, SVC_PORT: '1' };
      expect(await runCli(['daemon'], { ...env, SVC_SANDBOX: 'strict' })).toMatchObject({ code: 2, stderr: 'loom: invalid SVC_SANDBOX "strict" (use none or workspace)\n' });
      expect(await runCli(['daemon', '--sandbox', 'all'], env)).toMatchObject({ code: 2, stderr: 'loom: invalid --sandbox "all" (use none or workspace)\n' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('behaviour.md §15 fail closed where the kernel has no Landlock', () => {
  let d: RunningDaemon;
  let c: LoomClient;
  let home = '';
  beforeAll(async () => {
    d = await daemon({ env: { LOOM_SANDBOX_ABI_MAX: '0' } });
    c = new LoomClient(d.base, 'w');
    const r = await c.registerAgent({ agent_id: 'w', sandbox: 'workspace' });
    expect(r.status).toBe(200);
    home = String(r.body.home);
    writeFileSync(join(home, 'probe.md'), PROBE_DOC);
    writeFileSync(join(home, 'probe.sh'), 'touch ran-cli\n');
  });

  it('when /describe is read, then the sandbox is unavailable at ABI 0', async () => {
    const missing = ['files', 'network', 'processes', 'terminals'].map((guarantee) => ({ guarantee, reason: 'this kernel has no Landlock' }));
    expect((await call(d.base, 'GET', '/describe')).body.sandbox).toEqual({
      available: false, mechanism: 'landlock', abi: 0, default: 'none',
      guarantees: { files: false, network: false, processes: false, terminals: false }, missing, udp: 'open',
    });
  });

  it.each([['main'], ['bash:t']])('when a workspace agent runs /exec in %s, then SANDBOX_UNAVAILABLE and nothing runs', async (topic) => {
    expect(await run(c, topic, '/exec touch ran-exec')).toEqual({ ok: false, code: 'SANDBOX_UNAVAILABLE', body: UNAVAILABLE });
    expect(existsSync(join(home, 'ran-exec'))).toBe(false);
  });

  it('when a workspace agent runs a CLI action, then SANDBOX_UNAVAILABLE and nothing runs', async () => {
    expect((await run(c, 'doc', '/open ~/probe.md')).ok).toBe(true);
    expect(await run(c, 'doc', '/act.probe')).toEqual({ ok: false, code: 'SANDBOX_UNAVAILABLE', body: UNAVAILABLE });
    expect(existsSync(join(home, 'ran-cli'))).toBe(false);
  });

  it('when a none agent runs /exec on the same daemon, then it runs', async () => {
    const n = new LoomClient(d.base, 'n');
    await n.registerAgent({ agent_id: 'n' });
    expect((await run(n, 'main', '/exec echo fine')).body).toBe('exit: 0 | cwd: ~\n---\nfine');
  });
});
