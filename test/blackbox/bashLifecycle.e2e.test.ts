import { afterAll, describe, expect, it } from '@jest/globals';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { loomProcesses, waitFor } from '../shell/support.js';

/*
 * Lifecycle on the built daemon (behaviour.md §8.3): a shell ends with /close, DELETE
 * /sessions, agent deletion, a change of home, POST /shutdown and SIGTERM, and no process it started
 * survives (the process table is read: every process whose environment has LOOM_AGENT_ID=<this
 * test's agent>). Each shell first starts a background job that would outlive a careless kill.
 */

const running: RunningDaemon[] = [];
afterAll(async () => { for (const d of running) await d.kill(); });

let n = 0;
async function daemon(env: Record<string, string> = {}): Promise<{ d: RunningDaemon; c: LoomClient; agent: string }> {
  const d = await startDaemon({ env });
  running.push(d);
  const agent = `lc-${process.pid}-${++n}`;
  const c = new LoomClient(d.base, agent);
  await c.registerAgent({ agent_id: agent });
  return { d, c, agent };
}

async function body(c: LoomClient, topic: string, cmd: string): Promise<string> {
  const r = await c.exec(topic, cmd);
  return r.body ?? '';
}

/** Start a shell in `topic` with a background job; returns the shell's processes (at least bash and sleep). */
async function busyShell(c: LoomClient, agent: string, topic: string): Promise<void> {
  const sleeps = () => loomProcesses(agent).filter((p) => p.cmd === 'sleep 1000').length;
  const before = sleeps();
  expect(await body(c, topic, '/exec sleep 1000 & echo started')).toBe('exit: 0 | cwd: ~\n---\nstarted');
  expect(loomProcesses(agent).some((p) => p.cmd.includes('bash'))).toBe(true);
  // The shell answers right after forking the job, which may not have exec'd `sleep` yet: wait for it.
  await waitFor(() => sleeps() === before + 1, 5000);
}

const gone = (agent: string) => waitFor(() => loomProcesses(agent).length === 0, 5000);

describe('behaviour.md §8.3 the shell ends with its session, and nothing survives it', () => {
  it('when /close runs in the bash topic, then the shell ends and its processes are gone', async () => {
    const { c, agent } = await daemon();
    await busyShell(c, agent, 'bash:a');
    expect(await body(c, 'bash:a', '/close')).toBe('Shell of bash:a ended');
    await gone(agent);
    expect(await body(c, 'bash:a', '/exec echo fresh')).toBe('exit: 0 | cwd: ~\n---\nfresh');
  });

  it('when DELETE /sessions closes an idle bash topic, then its processes are gone', async () => {
    const { c, agent } = await daemon();
    await busyShell(c, agent, 'bash:a');
    expect((await c.closeSession(agent, 'bash:a')).status).toBe(200);
    await gone(agent);
  });

  it('when DELETE /sessions closes a bash topic while a command runs, then CONFLICT, the processes are gone, and the queued command runs in a new shell', async () => {
    const { c, agent } = await daemon();
    await busyShell(c, agent, 'bash:a');
    const first = c.exec('bash:a', '/exec cd /tmp; sleep 1000');
    await waitFor(() => loomProcesses(agent).filter((p) => p.cmd === 'sleep 1000').length === 2, 5000);
    const queued = c.exec('bash:a', '/exec pwd; echo $$');
    await new Promise((r) => setTimeout(r, 100));
    expect((await c.closeSession(agent, 'bash:a')).status).toBe(200);
    expect((await first).body).toBe('ERROR(CONFLICT): Topic bash:a was closed while this command ran');
    const q = (await queued).body ?? '';
    expect(q).toMatch(/^exit: 0 \| cwd: ~\n---\n\/.+\n\d+$/);
    const newPid = Number(q.split('\n').pop());
    await waitFor(() => loomProcesses(agent).every((p) => p.pid === newPid), 5000);
  });

  it('when the agent is deleted, then its shells and their processes are gone', async () => {
    const { c, agent } = await daemon();
    await busyShell(c, agent, 'bash:a');
    await busyShell(c, agent, 'bash:b');
    const del = await c.deleteAgent(agent);
    expect(del.body).toMatchObject({ deleted: true, disposed_sessions: 2 });
    await gone(agent);
  });

  it('when the agent gets a new home, then its shells end (sessions are disposed) and the next shell starts in the new home', async () => {
    const { c, agent } = await daemon();
    await busyShell(c, agent, 'bash:a');
    const home = tempDir();
    await c.registerAgent({ agent_id: agent, home });
    await gone(agent);
    expect(await body(c, 'bash:a', '/exec pwd')).toBe(`exit: 0 | cwd: ~\n---\n${home}`);
  });

  it('when POST /shutdown is called, then the daemon exits 0 and no shell process is left', async () => {
    const { d, c, agent } = await daemon();
    await busyShell(c, agent, 'bash:a');
    await busyShell(c, agent, 'bash:b');
    expect((await c.shutdown()).status).toBe(200);
    expect(await d.stop()).toBe(0);
    await gone(agent);
  });

  it('when the daemon gets SIGTERM, even while a command runs, then it exits 0 and no shell process is left', async () => {
    const { d, c, agent } = await daemon();
    await busyShell(c, agent, 'bash:a');
    const pending = c.exec('bash:b', "/exec trap '' HUP INT TERM; sleep 1000");
    await waitFor(() => loomProcesses(agent).filter((p) => p.cmd === 'sleep 1000').length === 2, 5000);
    expect(await d.stop()).toBe(0);
    await pending.catch(() => undefined);
    await gone(agent);
  });
});

describe('behaviour.md §8.3 without a PTY (LOOM_PTY=0): pipes, same protocol', () => {
  it('when no PTY can be used, then bash topics run on pipes, /topics says so, state persists, timeouts work, /describe has no bash-pty', async () => {
    const { d, c, agent } = await daemon({ LOOM_PTY: '0' });
    expect(await body(c, 'bash:p', '/exec cd /tmp && export X=1; alias a="echo alias"; tty')).toBe('ERROR(EXIT_1): command exited with status 1\nexit: 1 | cwd: /tmp\n---\nnot a tty');
    expect(await body(c, 'bash:p', '/exec echo "$X"; a; read y; cat; echo end')).toBe('exit: 0 | cwd: /tmp\n---\n1\nalias\nend');
    expect(await body(c, 'bash:p', '/topics bash')).toContain('* bash:p  bash  shell alive (pipes, no PTY) · cwd /tmp');
    expect(await body(c, 'bash:p', '/exec --timeout 1 echo before; sleep 1000')).toBe('ERROR(TIMEOUT): timed out after 1 s; the command was interrupted\nexit: timeout | cwd: /tmp\n---\nbefore');
    expect(await body(c, 'bash:p', '/exec echo next')).toBe('exit: 0 | cwd: /tmp\n---\nnext');
    expect(await body(c, 'bash:p', '/exec exit 4')).toBe('ERROR(EXIT_4): command exited with status 4\nexit: 4 | cwd: /tmp\n---\n(no output)\n(shell ended; the next /exec starts a new shell in ~)');
    expect((await c.describe()).body.capabilities).not.toHaveProperty('bash-pty');
    expect((await c.describe()).body.capabilities).toHaveProperty('bash', { pty: false });
    await busyShell(c, agent, 'bash:q');
    expect(await d.stop()).toBe(0);
    await gone(agent);
  });
});
