import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { PROBE_DOC, run, skipReason } from './support.js';

/*
 * behaviour.md §15 hostile suite on the built daemon: from a `workspace` agent, through /exec, a
 * `bash:<name>` shell and a CLI action, every way out of the workspace is tried; each attempt prints
 * LEAK when it got through and DENIED when it did not. The same attempts from a `none` agent are the
 * control: they get through (the spec's behaviour), which shows each probe really reaches its target.
 */

const reason = skipReason();
if (reason) process.stderr.write(`test/sandbox/hostile: skipped: ${reason}\n`);
const suite = reason ? describe.skip : describe;

const TAG = `sbx${process.pid}`;
const MARKER = `daemon-secret-${TAG}`;
let d: RunningDaemon | undefined;
let data = '';
let otherHome = '';
let userSecret = '';
let outside = '';
const agents: Record<'workspace' | 'none', { c: LoomClient; home: string }> = {} as never;

beforeAll(async () => {
  if (reason) return;
  // The user's home: a secret file there (removed in afterAll) stands for ~/.ssh and the like.
  userSecret = join(homedir(), `.loom-sandbox-secret-${TAG}`);
  writeFileSync(userSecret, 'user-secret');
  outside = `/tmp/loom-sandbox-outside-${TAG}`;
  const pyenv = join(homedir(), '.pyenv');
  d = await startDaemon({ env: { LOOM_TEST_MARKER: MARKER, ...(existsSync(pyenv) ? { SVC_SANDBOX_READ: pyenv } : {}) } });
  data = realpathSync(d.dataDir);
  for (const mode of ['workspace', 'none'] as const) {
    const c = new LoomClient(d.base, `${mode}-agent`);
    const home = String((await c.registerAgent({ agent_id: `${mode}-agent`, sandbox: mode })).body.home);
    writeFileSync(join(home, 'probe.md'), PROBE_DOC);
    writeFileSync(join(home, 'probe.sh'), 'echo ready');
    expect((await run(c, 'doc', '/open ~/probe.md')).ok).toBe(true);
    agents[mode] = { c, home };
  }
  const other = new LoomClient(d.base, 'other');
  otherHome = String((await other.registerAgent({ agent_id: 'other' })).body.home);
  writeFileSync(join(otherHome, 'secret.txt'), 'other-secret');
}, 30000);

afterAll(async () => {
  await d?.stop();
  for (const p of [userSecret, outside]) if (p) rmSync(p, { force: true });
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

type Channel = 'exec' | 'bash' | 'cli';
const CHANNELS: Channel[] = ['exec', 'bash', 'cli'];

/** Run one shell line for an agent through a channel; returns the answer's body. */
async function attempt(mode: 'workspace' | 'none', channel: Channel, script: string): Promise<string> {
  const { c, home } = agents[mode];
  if (channel === 'cli') {
    writeFileSync(join(home, 'probe.sh'), script + '\n');
    return (await run(c, 'doc', '/act.probe')).body;
  }
  return (await run(c, channel === 'bash' ? 'bash:t' : 'main', `/exec ${script}`)).body;
}

/** `cmd` succeeds → LEAK, fails → DENIED (its error output hidden). */
const probe = (cmd: string) => `if { ${cmd}; } >/dev/null 2>&1; then echo LEAK; else echo DENIED; fi`;

/** The attempts; `$D`, `$OH`, `$US`, `$OUT`, `$DP` stand for the data dir, another home, the user's secret, a path outside and the daemon pid. */
const ATTEMPTS: Array<[string, string]> = [
  ['read the data directory (agents.json)', probe('cat "$D/agents.json"')],
  ['list the data directory', probe('ls "$D/agents"')],
  ["read another agent's home", probe('cat "$OH/secret.txt"')],
  ["read the user's home", probe('cat "$US"')],
  ['write /tmp', probe('echo x > "$OUT"')],
  ["write another agent's home", probe('echo x > "$OH/pwned"')],
  ['write the data directory', probe('echo x > "$D/pwned"')],
  ['read through a symlink to outside', probe('ln -sfn "$D/agents.json" link && cat link')],
  ['write through a symlink to outside', probe('ln -sfn "$OH" dirlink && echo x > dirlink/pwned-link')],
  ['hard-link a file from outside', probe('ln "$OH/secret.txt" hardlink && cat hardlink')],
  ['.. out of the home', probe('cat ../../../agents.json')],
  ['rename a file out of the home', probe('echo x > moved && mv moved "$OH/moved"')],
  ['rename a file in from outside', probe('mv "$OH/secret.txt" stolen')],
  ['/proc/self/root', probe('cat "/proc/self/root$D/agents.json"')],
  ["/proc/<daemon>/cwd", probe('ls "/proc/$DP/cwd/"')],
  ["/proc/<daemon>/environ", probe(`grep -a -q "${MARKER}" "/proc/$DP/environ"`)],
  ['a setuid binary (su) reading the data directory', probe('su root -c "cat $D/agents.json"')],
];

/** Set the names the attempts use, then the attempt. */
function script(body: string): string {
  return `D='${data}'; OH='${otherHome}'; US='${userSecret}'; OUT='${outside}'; DP=${d?.proc.pid ?? 0}; ${body}`;
}

suite('behaviour.md §15 workspace sandbox: hostile attempts are denied', () => {
  for (const channel of CHANNELS) {
    it.each(ATTEMPTS)(`${channel}: when a workspace agent tries to %s, then it is denied`, async (_what, body) => {
      expect(await attempt('workspace', channel, script(body))).toMatch(/DENIED$/);
    });
  }

  it('when any of those ran, then nothing was written outside the workspace and the secrets are intact', () => {
    expect(existsSync(outside)).toBe(false);
    for (const f of ['pwned', 'pwned-link', 'moved']) expect(existsSync(join(otherHome, f))).toBe(false);
    expect(existsSync(join(data, 'pwned'))).toBe(false);
    expect(readFileSync(join(otherHome, 'secret.txt'), 'utf8')).toBe('other-secret');
  });

  it.each(CHANNELS)('%s: when a background job outlives the command, then it stays confined', async (channel) => {
    const body = `( sleep 0.3; echo x > "$OH/late-${channel}" ) >/dev/null 2>&1 & disown; echo started`;
    expect(await attempt('workspace', channel, script(body))).toMatch(/started$/);
    await new Promise((r) => setTimeout(r, 1200));
    expect(existsSync(join(otherHome, `late-${channel}`))).toBe(false);
  });

  it.each(CHANNELS)('%s: when the process status is read, then no_new_privs is set (setuid binaries gain nothing)', async (channel) => {
    expect(await attempt('workspace', channel, 'grep NoNewPrivs /proc/self/status')).toMatch(/NoNewPrivs:\s+1$/);
  });
});

suite('behaviour.md §15 control: a none agent runs as the spec says', () => {
  // Attempts that change state (writes, renames) are left out: the reads show the probes reach their targets.
  // `su` gets through for a none agent only when the suite runs as root (su asks anyone else for a
  // password), so the setuid control is checked only there; the workspace side is checked for everyone.
  const controls = process.getuid?.() === 0 ? /^read|^list|^\.\.|^\/proc\/self|^\/proc\/<daemon>\/cwd|setuid/ : /^read|^list|^\.\.|^\/proc\/self|^\/proc\/<daemon>\/cwd/;
  const READS = ATTEMPTS.filter(([what]) => controls.test(what));
  for (const channel of CHANNELS) {
    it.each(READS)(`${channel}: when a none agent tries to %s, then it gets through`, async (_what, body) => {
      expect(await attempt('none', channel, script(body))).toMatch(/LEAK$/);
    });
  }

  it("when a none agent reads the daemon's /proc environ, then the daemon's variables are not there (scrubbed for every agent)", async () => {
    expect(await attempt('none', 'exec', script(probe(`grep -a -q "${MARKER}" "/proc/$DP/environ"`)))).toMatch(/DENIED$/);
  });
});
