import { afterAll, describe, expect, it } from '@jest/globals';
import { readdirSync, rmSync } from 'node:fs';
import { scriptFolderBase } from '../../src/effects/shellProcess.js';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { alive, loomProcesses, waitFor } from '../shell/support.js';

/*
 * behaviour.md §1.1: after a crash (`kill -9` of the daemon), the next daemon on the same data
 * directory ends every process the earlier one's shells and commands left, including ones that left
 * the process group or ignore SIGHUP, and says in its log how many. The process table is read for
 * processes whose environment has LOOM_AGENT_ID=<this test's agent>; whatever is left is killed in
 * afterAll, pass or fail.
 */

const AGENT = `bb-crash-${process.pid}`;
const data = tempDir();
const home = tempDir();
const daemons: RunningDaemon[] = [];

afterAll(async () => {
  for (const d of daemons) await d.kill();
  for (const p of loomProcesses(AGENT)) {
    try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone meanwhile */ }
  }
  rmSync(data, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

async function body(c: LoomClient, topic: string, cmd: string): Promise<string> {
  return (await c.exec(topic, cmd)).body ?? '';
}

const sleeps = () => loomProcesses(AGENT).filter((p) => /^sleep 100\d$/.test(p.cmd));

/** The marked processes once none has started or ended for 300 ms (the crashed shell winds down first). */
async function settled(): Promise<number[]> {
  let last = '';
  let since = Date.now();
  for (;;) {
    const now = loomProcesses(AGENT).map((p) => p.pid).sort((a, b) => a - b);
    const key = now.join(',');
    if (key !== last) { last = key; since = Date.now(); }
    if (Date.now() - since >= 300) return now;
    await new Promise((r) => setTimeout(r, 30));
  }
}

describe('behaviour.md §1.1 a daemon ends what a crashed daemon left', () => {
  it('when the daemon is killed with jobs that escape SIGHUP and the group, then the next start ends them all and logs how many', async () => {
    const first = await startDaemon({ dataDir: data });
    daemons.push(first);
    const c = new LoomClient(first.base, AGENT);
    await c.registerAgent({ agent_id: AGENT, home });
    expect(await body(c, 'bash:a', "/exec nohup sleep 1001 >/dev/null 2>&1 & (trap '' HUP; sleep 1002) & setsid sleep 1003 & echo started")).toBe('exit: 0 | cwd: ~\n---\nstarted');
    expect(await body(c, 'tab', '/exec sleep 1004 >/dev/null 2>&1 & echo one-shot')).toBe('exit: 0 | cwd: ~\n---\none-shot');
    await waitFor(() => sleeps().length === 4, 5000);

    const shellFolders = () => readdirSync(scriptFolderBase()).filter((n) => n.startsWith(`loom-shell-${first.proc.pid}.`));
    expect(shellFolders()).toHaveLength(1);
    await first.kill();
    const left = await settled();
    // The crashed daemon's shell folder (script and command pipe) is left too.
    expect(shellFolders()).toHaveLength(1);
    // What the crash leaves: the four jobs at least (SIGHUP ignored, a new session, a one-shot's orphan).
    expect(sleeps().map((p) => p.cmd).sort()).toEqual(['sleep 1001', 'sleep 1002', 'sleep 1003', 'sleep 1004']);

    const second = await startDaemon({ dataDir: data });
    daemons.push(second);
    expect(second.stderr()).toContain(`loom: ended ${left.length} processes left by an earlier daemon\n`);
    await waitFor(() => left.every((pid) => !alive(pid)), 5000);
    expect(loomProcesses(AGENT)).toEqual([]);
    expect(shellFolders()).toEqual([]);

    // The new daemon's own shells work, and a clean stop after it ends its setsid jobs too.
    const c2 = new LoomClient(second.base, AGENT);
    expect(await body(c2, 'bash:a', '/exec setsid sleep 1005 & echo again')).toBe('exit: 0 | cwd: ~\n---\nagain');
    await waitFor(() => sleeps().length === 1, 5000);
    expect(await second.stop()).toBe(0);
    await waitFor(() => loomProcesses(AGENT).length === 0, 5000);
    expect(second.stderr()).not.toContain('ended 0');
  });

  it('when the earlier daemon stopped cleanly, then the next start scans nothing and logs nothing about leftovers', async () => {
    const third = await startDaemon({ dataDir: data });
    daemons.push(third);
    expect(await third.stop()).toBe(0);
    expect(third.stderr()).not.toContain('left by an earlier daemon');
  });
});
