import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { loomProcesses, waitFor } from '../shell/support.js';

/*
 * A job that reads the shell's terminal takes nothing of what Loom sends the shell (behaviour.md
 * §8.3): commands reach bash through a named pipe in its private folder, not the PTY. Each command
 * has a short limit, so a command the job ate answers TIMEOUT here instead of hanging the test.
 */

const AGENT = `bb-tty-${process.pid}`;
let d: RunningDaemon | undefined;
let c: LoomClient;
const data = tempDir();
const home = tempDir();

async function body(topic: string, cmd: string): Promise<string> {
  const r = await c.exec(topic, cmd);
  expect(r.status).toBe(200);
  return r.body ?? '';
}

beforeAll(async () => {
  d = await startDaemon({ dataDir: data });
  c = new LoomClient(d.base, AGENT);
  await c.registerAgent({ agent_id: AGENT, home });
});
afterAll(async () => {
  await d?.stop();
  await waitFor(() => loomProcesses(AGENT).length === 0, 5000).catch(() => undefined);
  for (const p of loomProcesses(AGENT)) process.kill(p.pid, 'SIGKILL');
  rmSync(data, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

describe('behaviour.md §8.3 a job reading the terminal does not desynchronise the shell', () => {
  it('when a background dd reads /dev/tty, then every later command answers in order and dd reads nothing', async () => {
    expect(await body('bash:t', '/exec (dd bs=1 count=200 </dev/tty >f 2>/dev/null) & echo started')).toBe('exit: 0 | cwd: ~\n---\nstarted');
    await waitFor(() => loomProcesses(AGENT).some((p) => p.cmd.startsWith('dd ')), 5000);
    expect(await body('bash:t', '/exec --timeout 5 echo one')).toBe('exit: 0 | cwd: ~\n---\none');
    expect(await body('bash:t', '/exec --timeout 5 cd /tmp && echo two')).toBe('exit: 0 | cwd: /tmp\n---\ntwo');
    expect(await body('bash:t', `/exec --timeout 5 printf '%s\\n' ${'x'.repeat(300)} | wc -c`)).toBe('exit: 0 | cwd: /tmp\n---\n301');
    expect(await body('bash:t', '/exec --timeout 5 export V=three; echo "$V"')).toBe('exit: 0 | cwd: /tmp\n---\nthree');
    // The job is still waiting for the terminal and has taken no byte of the commands above.
    expect(loomProcesses(AGENT).some((p) => p.cmd.startsWith('dd '))).toBe(true);
    expect(await body('bash:t', `/exec --timeout 5 wc -c < ${home}/f`)).toBe('exit: 0 | cwd: /tmp\n---\n0');
  });

  it('when a command times out while dd reads the terminal, then the shell is interrupted and the next command answers', async () => {
    expect(await body('bash:t', '/exec --timeout 1 echo before; sleep 1000')).toBe('ERROR(TIMEOUT): timed out after 1 s; the command was interrupted\nexit: timeout | cwd: /tmp\n---\nbefore');
    expect(await body('bash:t', '/exec --timeout 5 echo after; echo "$V"')).toBe('exit: 0 | cwd: /tmp\n---\nafter\nthree');
  });

  it('when the shell is closed, then dd ends with it', async () => {
    expect(await body('bash:t', '/close')).toBe('Shell of bash:t ended');
    await waitFor(() => loomProcesses(AGENT).length === 0, 5000);
  });
});
