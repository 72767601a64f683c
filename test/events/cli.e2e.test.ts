import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { LoomClient } from '../../src/client/index.js';
import { CLI, runCli, startDaemon, type RunningDaemon } from '../helpers/daemon.js';

let d: RunningDaemon;
const env = () => ({ SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, LOOM_AGENT_ID: '' });
const loom = (...args: string[]) => runCli(['--agent', 'cli', ...args], env());
const post = async (text: string) => {
  const url = (await new LoomClient(d.base).webhook('cli')).body.webhook_url;
  const r = await fetch(url, { method: 'POST', body: text });
  return ((await r.json()) as { event_id: string }).event_id;
};

beforeAll(async () => {
  d = await startDaemon();
  await new LoomClient(d.base).registerAgent({ agent_id: 'cli' });
});
afterAll(async () => { await d.stop(); });

describe('loom event … (spec §4.10 shell forms; behaviour.md §2.13)', () => {
  it('when webhook show runs, then it prints the /webhook show text (creating the token)', async () => {
    const r = await loom('event', 'webhook', 'show');
    expect(r.code).toBe(0);
    const url = (await new LoomClient(d.base).webhook('cli')).body.webhook_url;
    expect(r.stdout).toBe(`Local webhook for agent 'cli'\n---\n${url}\nPost text to it: curl -X POST --data-binary @message.txt '${url}'\nRotate: /webhook rotate\n`);
  });

  it('when list, read and ack run, then they print what the commands print', async () => {
    const a = await post('first event');
    const b = await post('second event\nwith more');
    const c = new LoomClient(d.base, 'cli');
    const list = await loom('event', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toBe((await c.exec('event', '/events')).body + '\n');
    expect(list.stdout).toContain(`  ${b}  pending`);
    const read = await loom('event', 'read', a);
    expect(read.stdout).toBe((await c.exec('event', `/events.read ${a}`)).body + '\n');
    const ack = await loom('event', 'ack', a);
    expect(ack).toMatchObject({ code: 0, stdout: `Acked ${a}\n` });
    const all = await loom('event', 'list', '--all');
    expect(all.stdout.split('\n')[0]).toBe('Event inbox of cli — 2 events (1 pending, 1 acked; newest first)');
    const ackAll = await loom('event', 'ack', '--all');
    expect(ackAll.stdout).toBe('Acked 1 event\n');
  });

  it('when --json is given, then list, read, ack and webhook show print the parsed objects', async () => {
    const c = new LoomClient(d.base, 'cli');
    const a = await post('json one\nsecond line');
    const b = await post('json two');
    const list = JSON.parse((await loom('--json', 'event', 'list')).stdout) as { agent_id: string; pending: number; events: Array<Record<string, unknown>> };
    expect(list.agent_id).toBe('cli');
    expect(list.pending).toBe(2);
    expect(list.events.map((e) => e.id)).toEqual([b, a]);
    expect(list.events[1]).toEqual({ id: a, agentId: 'cli', receivedAt: expect.any(String), source: 'local-webhook', text: 'json one\nsecond line', status: 'pending' });
    const read = await loom('--json', 'event', 'read', a);
    expect(JSON.parse(read.stdout)).toEqual(list.events[1]);
    const ack = await loom('--json', 'event', 'ack', a, b);
    expect(JSON.parse(ack.stdout)).toEqual({ agent_id: 'cli', acked: [{ id: a, already: false }, { id: b, already: false }] });
    const all = JSON.parse((await loom('--json', 'event', 'list', '--all')).stdout) as { pending: number; acked: number; events: Array<{ status: string }> };
    expect(all.pending).toBe(0);
    expect(all.acked).toBeGreaterThanOrEqual(2);
    expect(all.events.every((e) => e.status === 'acked')).toBe(true);
    const hook = await loom('--json', 'event', 'webhook', 'show');
    expect(JSON.parse(hook.stdout)).toEqual({ agent_id: 'cli', webhook_url: (await c.webhook('cli')).body.webhook_url });
    const missing = await loom('--json', 'event', 'read', 'evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toEqual({ error: 'Event not found: evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2', code: 'HTTP_404' });
  });

  it('when ack gets neither ids nor --all (or both), then a usage error', async () => {
    expect(await loom('event', 'ack')).toMatchObject({ code: 2, stderr: 'loom: event ack takes event ids or --all (not both); e.g.  loom event ack evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2\n' });
    expect((await loom('event', 'ack', 'evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2', '--all')).code).toBe(2);
  });

  it('when the agent does not exist, then every event command says so and registers nothing', async () => {
    for (const args of [['event', 'list'], ['--json', 'event', 'list'], ['event', 'webhook', 'show'], ['--json', 'event', 'webhook', 'show']]) {
      const r = await runCli(['--agent', 'nobody', ...args], env());
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain("unknown agent 'nobody'");
    }
    expect((await new LoomClient(d.base).listAgents()).body.agents.map((x) => x.id)).not.toContain('nobody');
  });

  it('when read names an unknown event, then exit 1 with the ERROR line on stderr', async () => {
    const r = await loom('event', 'read', 'evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2');
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'ERROR(NOT_FOUND): Event not found: evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2\n' });
  });

  it('when webhook rotate runs, then the new URL is printed and the old one is dead', async () => {
    const old = (await new LoomClient(d.base).webhook('cli')).body.webhook_url;
    const r = await loom('event', 'webhook', 'rotate');
    const now = (await new LoomClient(d.base).webhook('cli')).body.webhook_url;
    expect(r.stdout).toBe(`Rotated webhook for agent 'cli'\n---\n${now}\n`);
    expect((await fetch(old, { method: 'POST', body: 'x' })).status).toBe(401);
  });
});

/** A running `loom event watch` with its output collected. */
function startWatch(args: string[]): { proc: ChildProcess; out: () => string; err: () => string; until(pred: () => boolean, what: string): Promise<void>; stop(): Promise<void> } {
  const proc = spawn(process.execPath, [CLI, ...args, 'event', 'watch'], { env: { ...process.env, ...env() }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  const wake = () => { for (const w of waiters.splice(0)) w(); };
  proc.stdout?.on('data', (c: Buffer) => { out += c.toString(); wake(); });
  proc.stderr?.on('data', (c: Buffer) => { err += c.toString(); wake(); });
  const exited = new Promise<void>((r) => proc.once('exit', () => { wake(); r(); }));
  return {
    proc, out: () => out, err: () => err,
    async until(pred, what) {
      while (!pred()) {
        if (proc.exitCode !== null) throw new Error(`watch exited before ${what}: ${out} ${err}`);
        await new Promise<void>((r) => waiters.push(r));
      }
    },
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

describe('loom event watch (behaviour.md §2.13, beyond spec)', () => {
  it('when events arrive, the daemon restarts, and more arrive, then watch prints them all and reconnects on its own', async () => {
    const w = startWatch(['--agent', 'cli']);
    try {
      await w.until(() => w.err().includes('watching the event inbox of cli'), 'ready');
      const a = await post('before restart\nsecond line');
      await w.until(() => w.out().includes(a), 'first event');
      expect(w.out()).toMatch(new RegExp(`^${a}  \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  before restart…\\n`));
      const { dataDir, port } = d;
      await d.stop();
      await w.until(() => /reconnecting in 1 s/.test(w.err()), 'reconnect notice');
      d = await startDaemon({ dataDir, port });
      await w.until(() => w.err().split('watching the event inbox of cli').length === 3, 'second ready');
      const b = await post('after restart');
      await w.until(() => w.out().includes(b), 'second event');
    } finally {
      await w.stop();
    }
  }, 30000);

  it('when --json is given, then each event is printed as its JSON record', async () => {
    const w = startWatch(['--agent', 'cli', '--json']);
    try {
      await w.until(() => w.err().includes('watching'), 'ready');
      const id = await post('json please');
      await w.until(() => w.out().includes(id), 'event');
      const rec = JSON.parse(w.out().trim().split('\n')[0]) as Record<string, unknown>;
      expect(rec).toMatchObject({ id, agentId: 'cli', source: 'local-webhook', text: 'json please', status: 'pending' });
    } finally {
      await w.stop();
    }
  });

  it('when the agent can never exist, then watch ends with exit 1 saying the id is invalid', async () => {
    const r = await runCli(['--agent', 'bad id!', 'event', 'watch'], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("loom: invalid agent id 'bad id!'");
  });

  it('when the agent is unknown, then watch ends with exit 1 and registers nothing', async () => {
    const r = await runCli(['--agent', 'ghost', 'event', 'watch'], env());
    expect(r).toMatchObject({ code: 1, stderr: "loom: unknown agent 'ghost'; create it with: loom agent add ghost\n" });
    expect((await new LoomClient(d.base).listAgents()).body.agents.map((x) => x.id)).not.toContain('ghost');
  });
});
