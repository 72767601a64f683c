import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { call } from '../helpers/app.js';
import { startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { alive, waitFor } from '../shell/support.js';

/*
 * The user wire's `bash:<name>` topics (behaviour.md §11: "everything not listed behaves as the agent
 * wire with agent read as user") on the built daemon: they keep one persistent shell (§8.3) whose
 * environment names the user as LOOM_USER_ID; `file:` topics stay one-shot (§8.2); the shells end with
 * the session and with the user, and nothing they started survives.
 */

let d: RunningDaemon | undefined;
let c: LoomClient;
let home: string;
const user = `uw-${process.pid}`;

beforeAll(async () => {
  d = await startDaemon({ args: ['--wire', 'user'] });
  home = realpathSync(tempDir());
  mkdirSync(join(home, 'sub'));
  c = new LoomClient(d.base, user, 'user');
  expect((await c.register(user, { home })).status).toBe(200);
});
afterAll(async () => { await d?.kill(); });

/** Processes whose environment has LOOM_USER_ID=<id>: every shell the daemon started for the user and their children. */
function userProcesses(id: string): Array<{ pid: number; cmd: string }> {
  const marker = `\0LOOM_USER_ID=${id}\0`;
  const out: Array<{ pid: number; cmd: string }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = `\0${readFileSync(`/proc/${name}/environ`, 'latin1')}`;
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (environ.includes(marker) && alive(Number(name))) out.push({ pid: Number(name), cmd });
    } catch {
      continue; // the process ended meanwhile, or is not ours to read
    }
  }
  return out;
}

async function body(topic: string, cmd: string): Promise<string> {
  const r = await c.exec(topic, cmd);
  expect(r.status).toBe(200);
  expect(r.head?.user_id).toBe(user);
  return r.body ?? '';
}

describe('user wire, bash:<name> topics run persistent shells (behaviour.md §8.3, §11)', () => {
  it('when a bash topic changes directory and exports, then the next /exec sees both, and the shell knows the user as LOOM_USER_ID', async () => {
    expect(await body('bash:build', '/exec cd sub && export MODE=fast')).toBe('exit: 0 | cwd: ~/sub\n---\n(no output)');
    expect(await body('bash:build', '/exec pwd; echo "$MODE|$LOOM_USER_ID|${LOOM_AGENT_ID-unset}|$LOOM_TOPIC|$HOME"'))
      .toBe(`exit: 0 | cwd: ~/sub\n---\n${home}/sub\nfast|${user}|unset|bash:build|${home}`);
    const r = await c.exec('bash:build', '/exec true');
    expect(r.head?.topic_type).toBe('bash');
  });

  it('when /topics bash is asked, then the live shell is listed with its cwd', async () => {
    expect(await body('bash:build', '/topics bash')).toMatch(/^\* bash:build +bash +shell alive.* · cwd ~\/sub$/m);
  });

  it('when a file: topic does the same, then each /exec is one-shot in the user home', async () => {
    expect(await body('file:notes', '/exec cd sub && export MODE=fast')).toBe('exit: 0 | cwd: ~\n---\n(no output)');
    expect(await body('file:notes', '/exec pwd; echo "${MODE-unset}"')).toBe(`exit: 0 | cwd: ~\n---\n${home}\nunset`);
  });

  it('when the topic form is not the user wire\'s, then 400 Invalid topic and no shell starts', async () => {
    for (const topic of ['bash:a:b', 'bash:', 'bash']) {
      const r = await call(d!.base, 'POST', '/exec', { headers: { 'X-User-Id': user }, body: { cmd: '/exec echo x', topic } });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: `Invalid topic: ${topic}` });
    }
  });

  it('when /close runs in the bash topic, then its shell ends and the next /exec starts a new one in ~', async () => {
    expect(await body('bash:build', '/close')).toBe('Shell of bash:build ended');
    expect(await body('bash:build', '/exec pwd')).toBe(`exit: 0 | cwd: ~\n---\n${home}`);
  });

  it('when the user is deleted, then their shells and everything the shells started are gone', async () => {
    expect(await body('bash:a', '/exec sleep 1000 & echo started')).toBe('exit: 0 | cwd: ~\n---\nstarted');
    expect(await body('bash:b', '/exec sleep 1000 & echo started')).toBe('exit: 0 | cwd: ~\n---\nstarted');
    // The background job may not have exec'd `sleep` yet when the shell answers: wait for both.
    await waitFor(() => userProcesses(user).filter((p) => p.cmd === 'sleep 1000').length === 2, 5000);
    const del = await c.deleteAgent(user);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ user_id: user, deleted: true, disposed_sessions: 4 });
    await waitFor(() => userProcesses(user).length === 0, 5000);
  });
});
