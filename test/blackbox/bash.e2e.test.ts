import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { alive, loomProcesses, waitFor } from '../shell/support.js';

/*
 * On the built daemon: `/exec` in `bash:<name>` topics runs in one persistent shell per
 * topic (behaviour.md §8.3). Every agent id here is unique to this file, so the process-table checks
 * (processes whose environment carries LOOM_AGENT_ID=<id>) see only this file's shells.
 */

const AGENT = `bb-shell-${process.pid}`;
let d: RunningDaemon | undefined;
let c: LoomClient;
let home = '';

/** Run a command; returns ok, code and the body without the `re:` line. */
async function run(topic: string, cmd: string): Promise<{ ok: boolean; code: string | null; body: string }> {
  const r = await c.exec(topic, cmd);
  expect(r.status).toBe(200);
  expect(r.done).toBe(true);
  return { ok: r.head?.ok ?? false, code: r.head?.code ?? null, body: r.body ?? '' };
}

beforeAll(async () => {
  d = await startDaemon();
  c = new LoomClient(d.base, AGENT);
  home = String((await c.registerAgent({ agent_id: AGENT })).body.home);
});
afterAll(async () => {
  await d?.stop();
  if (d) await waitFor(() => loomProcesses(AGENT).length === 0, 5000);
});

describe('behaviour.md §8.3 persistent shell of a bash:<name> topic', () => {
  it('when cd and export run in one /exec, then the next /exec sees the cwd and the variable', async () => {
    expect(await run('bash:p', '/exec cd /tmp && export FOO=bar')).toEqual({ ok: true, code: null, body: 'exit: 0 | cwd: /tmp\n---\n(no output)' });
    expect(await run('bash:p', '/exec pwd; echo "$FOO"')).toEqual({ ok: true, code: null, body: 'exit: 0 | cwd: /tmp\n---\n/tmp\nbar' });
    expect((await run('bash:p', '/exec cd')).body).toBe('exit: 0 | cwd: ~\n---\n(no output)');
  });

  it('when a function and an alias are defined, then later commands use them', async () => {
    await run('bash:p', '/exec greet() { echo "hello $1"; }\nalias ll="echo listing"');
    expect((await run('bash:p', '/exec greet you; ll')).body).toBe('exit: 0 | cwd: ~\n---\nhello you\nlisting');
  });

  it('when a command reads stdin (read, cat), then it gets /dev/null and does not hang', async () => {
    expect((await run('bash:p', '/exec read x; echo "x=[$x] $?"; cat; echo end')).body).toBe('exit: 0 | cwd: ~\n---\nx=[] 1\nend');
  });

  it('when the shell environment is read, then it is the one-shot one plus TERM=dumb, and the shell sits on a 200×50 PTY', async () => {
    const r = await run('bash:env', '/exec echo "$HOME|$LOOM_AGENT_ID|$LOOM_TOPIC|$TERM|$PS1|$HISTFILE"; [ -t 1 ] && echo tty; stty size </dev/tty');
    expect(r.body).toBe(`exit: 0 | cwd: ~\n---\n${home}|${AGENT}|bash:env|dumb||/dev/null\ntty\n50 200`);
  });

  it('when a program would start a pager (git log on a PTY), then it prints instead of waiting for keys', async () => {
    await run('bash:env', '/exec mkdir -p ~/pager && cd ~/pager && git init -q && git -c user.email=a@b.c -c user.name=n commit -q --allow-empty -m first-commit');
    const r = await run('bash:env', '/exec git log --format=%s; echo "$PAGER $GIT_PAGER"');
    expect(r.body.split('\n').slice(-2)).toEqual(['first-commit', 'cat cat']);
  });

  it('when a command has a syntax error, then EXIT_2 with the message and the shell keeps working', async () => {
    const r = await run('bash:p', '/exec if then fi');
    expect(r.code).toBe('EXIT_2');
    expect(r.body).toMatch(/^ERROR\(EXIT_2\): command exited with status 2\nexit: 2 \| cwd: ~\n---\nbash: .*: line 1: syntax error near unexpected token `then'/);
    expect((await run('bash:p', '/exec echo alive')).body).toBe('exit: 0 | cwd: ~\n---\nalive');
  });

  it('when a command prints 50,000 lines, then the capped output is exact 20 times in a row (byte count and last line)', async () => {
    const full = Array.from({ length: 50000 }, (_, i) => `${i + 1}\n`).join('');
    const head = full.slice(0, 65536);
    const tail = full.slice(full.length - 65536);
    const expected = `exit: 0 | cwd: ~\n---\n${head.replace(/\n$/, '')}\n… ${full.length - 131072} bytes omitted …\n${tail.replace(/\n$/, '')}`;
    for (let i = 0; i < 20; i++) {
      const r = await run('bash:big', '/exec seq 1 50000');
      expect(r.body.length).toBe(expected.length);
      expect(r.body.endsWith('\n49999\n50000')).toBe(true);
      expect(r.body).toBe(expected);
    }
  });

  it('when a command prints sentinel-like text, then the command does not end early and the text is output', async () => {
    const fake = '__LOOM_DONE_0123456789abcdef__|0|/tmp';
    const r = await run('bash:p', `/exec printf '\\n%s\\n' '${fake}'; echo '__LOOM_DONE_'"\${RANDOM}"'__|0|/'; sleep 0.2; echo after`);
    expect(r.body).toMatch(new RegExp(`^exit: 0 \\| cwd: ~\\n---\\n\\n${fake.replace(/[|]/g, '\\|')}\\n__LOOM_DONE_\\d+__\\|0\\|/\\nafter$`));
  });

  it('when the time limit passes, then ^C interrupts sleep 1000, TIMEOUT shows the output so far and nothing leaks into the next command', async () => {
    const r = await run('bash:t', "/exec --timeout 1 echo started; trap 'echo after-the-timeout' INT; sleep 1000; echo not-reached");
    expect(r).toEqual({ ok: false, code: 'TIMEOUT', body: 'ERROR(TIMEOUT): timed out after 1 s; the command was interrupted\nexit: timeout | cwd: ~\n---\nstarted' });
    expect((await run('bash:t', '/exec echo next')).body).toBe('exit: 0 | cwd: ~\n---\nnext');
    expect(loomProcesses(AGENT).some((p) => p.cmd.startsWith('sleep 1000'))).toBe(false);
  });

  it('when the command ignores ^C, then after 5 s the group is killed, the shell ended, and the next /exec starts a new shell in ~', async () => {
    await run('bash:k', '/exec cd /tmp');
    const before = (await run('bash:k', '/exec echo $$')).body.split('\n').pop();
    const r = await run('bash:k', "/exec --timeout 1 trap '' INT; echo stubborn; sleep 1000");
    expect(r.body).toBe('ERROR(TIMEOUT): timed out after 1 s; the command was interrupted\nexit: timeout | cwd: /tmp\n---\nstubborn\n(shell ended; the next /exec starts a new shell in ~)');
    await waitFor(() => !alive(Number(before)), 3000);
    const after = await run('bash:k', '/exec echo $$; pwd');
    expect(after.body).toMatch(/^exit: 0 \| cwd: ~\n---\n\d+\n/);
    expect(after.body.split('\n')[2]).not.toBe(before);
  }, 20000);

  it('when the command runs exit 3, then EXIT_3 with the shell-ended line, and the next /exec starts a new shell in ~', async () => {
    await run('bash:x', '/exec cd /tmp');
    const pid = Number((await run('bash:x', '/exec echo $$')).body.split('\n').pop());
    const r = await run('bash:x', '/exec echo bye; exit 3');
    expect(r).toEqual({ ok: false, code: 'EXIT_3', body: 'ERROR(EXIT_3): command exited with status 3\nexit: 3 | cwd: /tmp\n---\nbye\n(shell ended; the next /exec starts a new shell in ~)' });
    await waitFor(() => !alive(pid), 3000);
    expect((await run('bash:x', '/topics bash')).body).toMatch(/\n\* bash:x +bash +no shell(\n|$)/);
    expect((await run('bash:x', '/exec pwd')).body).toBe(`exit: 0 | cwd: ~\n---\n${home}`);
    expect((await run('bash:x', '/exec exit 0')).body).toBe('exit: 0 | cwd: ~\n---\n(no output)\n(shell ended; the next /exec starts a new shell in ~)');
  });

  it('when the shell is killed from outside, then the running command reports its status and the shell ended', async () => {
    const r = await run('bash:x', '/exec kill -KILL $$');
    expect(r.body).toBe('ERROR(EXIT_137): command exited with status 137\nexit: 137 | cwd: ~\n---\n(no output)\n(shell ended; the next /exec starts a new shell in ~)');
  });

  it('when commands go to one bash topic, they queue (spec §3); other bash topics run at the same time', async () => {
    const stamp = (tag: string) => `/exec echo ${tag} $(date +%s%N); sleep 1; echo ${tag} $(date +%s%N)`;
    const [a1, a2, b1] = await Promise.all([run('bash:qa', stamp('a1')), run('bash:qa', stamp('a2')), run('bash:qb', stamp('b1'))]);
    const times = (r: { body: string }) => r.body.split('\n').slice(2).map((l) => Number(l.split(' ')[1]) / 1e6);
    const [a1s, a1e] = times(a1);
    const [a2s] = times(a2);
    const [b1s, b1e] = times(b1);
    expect(a2s).toBeGreaterThanOrEqual(a1e);
    expect(b1s).toBeLessThan(a1e);
    expect(a1s).toBeLessThan(b1e);
  });

  it('/topics and the bash hub show each shell with its cwd, pid and last command', async () => {
    await run('bash:h', '/exec cd /tmp');
    const pid = (await run('bash:h', '/exec echo $$')).body.split('\n').pop();
    expect((await run('bash:h', '/topics bash')).body).toMatch(/\n\* bash:h +bash +shell alive · cwd \/tmp(\n|$)/);
    const hub = (await run('bash', '/open')).body;
    expect(hub).toMatch(new RegExp(`\n  bash:h +shell alive · cwd /tmp · pid ${pid} · last: echo \\$\\$(\n|$)`));
  });

  it('/describe advertises bash-pty and bash.pty true', async () => {
    expect((await c.describe()).body.capabilities).toHaveProperty('bash-pty', {});
    expect((await c.describe()).body.capabilities).toHaveProperty('bash', { pty: true });
  });
});
