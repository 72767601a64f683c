import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { PROBE_DOC, run } from '../sandbox/support.js';
import { attempt, escapeSuite, output, type Channel } from './sandboxSupport.js';

/*
 * behaviour.md §15.1 `terminals` and `processes` on the built daemon, tried as an attacker would
 * from a `workspace` agent: one-shot commands and CLI actions get no terminal; a shell writes and
 * reads only its own PTY, never another agent's running shell; no confined process sees another
 * process at all (its own PID namespace), so another agent's CLI action's environ and cmdline —
 * with a secret from its env store — and the daemon's pid are out of reach.
 */

const { suite, reason } = escapeSuite('test/hostile/sandboxProcesses');

const SECRET = `sk-loom-escape-${process.pid}-${'q7'.repeat(8)}`;
let d: RunningDaemon | undefined;
let a: LoomClient;
let b: LoomClient;
let c: LoomClient;
let home = '';
let bHome = '';

beforeAll(async () => {
  if (reason) return;
  d = await startDaemon();
  a = new LoomClient(d.base, 'a');
  b = new LoomClient(d.base, 'b');
  c = new LoomClient(d.base, 'c');
  home = String((await a.registerAgent({ agent_id: 'a', sandbox: 'workspace' })).body.home);
  bHome = String((await b.registerAgent({ agent_id: 'b' })).body.home);
  expect((await c.registerAgent({ agent_id: 'c' })).status).toBe(200);
  for (const [client, h] of [[a, home], [b, bHome]] as const) {
    writeFileSync(join(h, 'probe.md'), PROBE_DOC);
    writeFileSync(join(h, 'probe.sh'), 'echo ready\n');
    expect((await run(client, 'doc', '/open ~/probe.md')).ok).toBe(true);
  }
  // b's env store holds a token; its CLI actions get it in their environment.
  expect((await run(b, 'main', `/set $API_KEY = "${SECRET}"`)).ok).toBe(true);
}, 30000);

afterAll(async () => {
  await d?.stop();
});

/** One shell line as agent a: its own output. */
async function inside(channel: Channel, line: string): Promise<string> {
  return (await attempt(a, home, channel, line)).out;
}

/** The pid of the process whose environment holds `text` (read from outside, as the user), or undefined. */
function pidWithEnv(text: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(text)) return Number(name);
    } catch {
      // Gone, or not ours: not the one looked for.
    }
  }
  return undefined;
}

/** Wait (bounded) until a process with `text` in its environment runs; its pid. */
async function waitForPid(text: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const pid = pidWithEnv(text);
    if (pid !== undefined) return pid;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no process with ${text} in its environment`);
}

suite('behaviour.md §15.1 terminals: one-shot commands and CLI actions get none', () => {
  it.each<Channel>(['exec', 'cli'])('%s: when it lists /dev/pts, then Permission denied', async (channel) => {
    expect(await inside(channel, 'ls /dev/pts; echo "exit=$?"')).toMatch(/^ls: cannot open directory '\/dev\/pts': Permission denied\nexit=2/);
  });

  it.each<Channel>(['exec', 'cli'])('%s: when it opens /dev/ptmx for a new terminal, then Permission denied', async (channel) => {
    expect(await inside(channel, 'exec 3<>/dev/ptmx && echo OPENED || echo refused')).toMatch(/\/dev\/ptmx: Permission denied\nrefused/);
  });
});

suite("behaviour.md §15.1 terminals: a confined shell has its own PTY and no other", () => {
  let cTty = '';
  beforeAll(async () => {
    if (reason) return;
    cTty = `/dev/${output((await run(c, 'bash:s', '/exec ps -o tty= -p $$')).body).trim()}`;
    expect(cTty).toMatch(/^\/dev\/pts\/\d+$/);
  });

  it('when the confined shell writes to its own terminal, then it can', async () => {
    expect(await inside('bash', 'T=/dev/$(ps -o tty= -p $$ | tr -d " "); : > "$T" && echo "own $T writable"')).toMatch(/^own \/dev\/pts\/\d+ writable$/);
  });

  it("when it lists /dev/pts to find other terminals, then Permission denied", async () => {
    expect(await inside('bash', 'ls /dev/pts; echo "exit=$?"')).toMatch(/^ls: cannot open directory '\/dev\/pts': Permission denied\nexit=2$/);
  });

  it("when it writes FORGED into agent c's shell while c's command runs, then Permission denied and c's answer has no FORGED", async () => {
    const running = run(c, 'bash:s', '/exec sleep 1; echo "c finished"');
    await new Promise((r) => setTimeout(r, 300));
    const out = await inside('bash', `echo FORGED-BY-A > ${cTty}; echo "exit=$?"`);
    expect(out).toBe(`bash: ${cTty}: Permission denied\nexit=1`);
    const answer = (await running).body;
    expect(answer).toBe('exit: 0 | cwd: ~\n---\nc finished');
    expect(output((await run(c, 'bash:s', '/exec echo next')).body)).toBe('next');
  });

  it("when it reads agent c's terminal (what c types), then Permission denied", async () => {
    expect(await inside('bash', `timeout 1 cat ${cTty}; echo "exit=$?"`)).toBe(`cat: ${cTty}: Permission denied\nexit=1`);
  });
});

suite('behaviour.md §15.1 processes: a confined command sees only its own PID namespace', () => {
  it.each<Channel>(['exec', 'bash', 'cli'])('%s: when it lists /proc, then it sees a handful of pids, not the daemon, and it is pid 1', async (channel) => {
    const out = await inside(channel, 'ls -d /proc/[0-9]* | tr "\\n" " "; echo; tr "\\0" " " < /proc/1/cmdline');
    const [list, init] = out.split('\n');
    const pids = list.trim().split(' ').map((p) => Number(p.slice('/proc/'.length)));
    expect(pids.length).toBeLessThanOrEqual(6);
    expect(pids).not.toContain(d?.proc.pid);
    expect(init).toMatch(/bash/);
  });

  it.each<Channel>(['exec', 'bash', 'cli'])("%s: when it signals the daemon's pid, then it fails and the daemon answers on", async (channel) => {
    const out = await inside(channel, `kill -9 ${d?.proc.pid ?? 0}; echo "exit=$?"`);
    expect(out).toMatch(/No such process\nexit=1$/);
    expect(d?.proc.exitCode).toBeNull();
    expect((await a.health()).status).toBe(200);
  });

  it.each<Channel>(['exec', 'cli'])("%s: when another agent's CLI action runs with an API key in its environment, then its environ and cmdline are out of reach", async (channel) => {
    // b's action runs until the test lets it end (at most 10 s).
    rmSync(join(bHome, 'release'), { force: true });
    writeFileSync(join(bHome, 'probe.sh'), `for i in $(seq 100); do [ -e release ] && break; sleep 0.1; done # ${channel}\n`);
    const running = run(b, 'doc', '/act.probe');
    const pid = await waitForPid(SECRET);
    // The probe is real: from outside, as the user, that process's environment holds the key.
    expect(readFileSync(`/proc/${pid}/environ`, 'latin1')).toContain(`API_KEY=${SECRET}`);
    const out = await inside(channel, [
      `cat /proc/${pid}/environ; cat /proc/${pid}/cmdline`,
      'grep -a -l "sk-loom-escape" /proc/[0-9]*/environ 2>/dev/null | sed "s/^/found /"',
      `kill -STOP ${pid}; echo "exit=$?"`,
    ].join('; '));
    expect(out).not.toContain(SECRET);
    expect(out).not.toMatch(/^found /m);
    expect(out).toContain(`cat: /proc/${pid}/environ: No such file or directory`);
    expect(out).toContain(`cat: /proc/${pid}/cmdline: No such file or directory`);
    expect(out).toMatch(/No such process\nexit=1$/);
    writeFileSync(join(bHome, 'release'), '');
    expect((await running).ok).toBe(true);
  }, 15000);
});
