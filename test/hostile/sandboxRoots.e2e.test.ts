import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { findExecutable } from '../../src/effects/nativeParts.js';
import { freePort, runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { PROBE_DOC, run } from '../sandbox/support.js';
import { escapeSuite, output } from './sandboxSupport.js';

/*
 * behaviour.md §15.4 and §15.6 on the built daemon, tried as an attacker would: a `workspace` agent
 * swaps one of its own rule roots (an allowed path, a folder above one, an allowed path created
 * later, an allowed path inside another, a home inside an allowed path) for a link to the data
 * directory; its next command and a new shell are refused naming the root, and nothing runs.
 * Registration stores real paths. A restart with another default moves the agents that did not
 * choose; a shared data directory stops the daemon with one line; a private temp folder swapped for
 * a link while unconfined is a real 0700 folder again before a confined command runs.
 */

const { suite, reason } = escapeSuite('test/hostile/sandboxRoots');

const started: RunningDaemon[] = [];
let d: RunningDaemon;

beforeAll(async () => {
  if (reason) return;
  d = await startDaemon();
  started.push(d);
}, 30000);

afterAll(async () => {
  for (const x of started) await x.stop();
});

/** The §15.4 refusal of a changed root. */
const changed = (root: string, now: string) => `ERROR(SANDBOX_UNAVAILABLE): rule root ${root} changed (${now}); the agent's commands were not run`;

/** Register a workspace agent (a first call gives its default home when `home` is not chosen) with `allowed(home)`. */
async function agent(id: string, allowed: (home: string) => string[], home?: string): Promise<{ c: LoomClient; home: string }> {
  const c = new LoomClient(d.base, id);
  const first = await c.registerAgent({ agent_id: id, sandbox: 'workspace', ...(home ? { home } : {}) });
  expect(first.status).toBe(200);
  const h = String(first.body.home);
  expect((await c.registerAgent({ agent_id: id, allowed_paths: allowed(h) })).status).toBe(200);
  return { c, home: h };
}

/**
 * The attack, then every way the agent's programs start: the next /exec, a new shell and a CLI
 * action answer exactly `refusal`, and the command that would read agents.json never ran.
 */
async function swapThenRefused(c: LoomClient, home: string, swap: string, refusal: string): Promise<void> {
  writeFileSync(join(home, 'probe.md'), PROBE_DOC);
  writeFileSync(join(home, 'probe.sh'), 'touch ran-cli\n');
  expect((await run(c, 'doc', '/open ~/probe.md')).ok).toBe(true);
  const r = await run(c, 'main', `/exec ${swap}`);
  expect(r.ok).toBe(true);
  const steal = '/exec cat "$SVC_DATA_DIR/agents.json"; touch ~/ran-exec';
  expect(await run(c, 'main', steal)).toEqual({ ok: false, code: 'SANDBOX_UNAVAILABLE', body: refusal });
  expect(await run(c, 'bash:new', steal)).toEqual({ ok: false, code: 'SANDBOX_UNAVAILABLE', body: refusal });
  expect(await run(c, 'doc', '/act.probe')).toEqual({ ok: false, code: 'SANDBOX_UNAVAILABLE', body: refusal });
  expect(existsSync(join(home, 'ran-exec'))).toBe(false);
  expect(existsSync(join(home, 'ran-cli'))).toBe(false);
}

suite('behaviour.md §15.4 rule roots cannot be swapped', () => {
  it('when an allowed path inside the home is replaced by a link to the data directory, then the next command, a new shell and a CLI action are refused naming it', async () => {
    const { c, home } = await agent('s', (h) => {
      mkdirSync(join(h, 'shared'));
      return [join(h, 'shared')];
    });
    await swapThenRefused(c, home, 'rm -rf ~/shared && ln -s "$SVC_DATA_DIR" ~/shared', changed(join(home, 'shared'), 'now a symbolic link'));
  });

  it('when a folder above an allowed path is replaced by a link, then the refusal names that folder', async () => {
    const { c, home } = await agent('p', (h) => {
      mkdirSync(join(h, 'dir', 'agents'), { recursive: true });
      return [join(h, 'dir', 'agents')];
    });
    const root = join(home, 'dir', 'agents');
    await swapThenRefused(c, home, 'rm -rf ~/dir && ln -s "$SVC_DATA_DIR" ~/dir', changed(root, `${join(home, 'dir')} is now a symbolic link`));
  });

  it('when an allowed path that did not exist at registration is created as a link, then it is refused naming it', async () => {
    const { c, home } = await agent('l', (h) => [join(h, 'later')]);
    expect(output((await run(c, 'main', '/exec echo fine')).body)).toBe('fine');
    await swapThenRefused(c, home, 'ln -s "$SVC_DATA_DIR" ~/later', changed(join(home, 'later'), 'now a symbolic link'));
  });

  it('when an allowed path inside another allowed path is replaced by a link, then it is refused naming it', async () => {
    const outer = realpathSync(tempDir());
    mkdirSync(join(outer, 'inner'));
    const { c, home } = await agent('n', () => [outer, join(outer, 'inner')]);
    await swapThenRefused(c, home, `rm -rf '${outer}/inner' && ln -s "$SVC_DATA_DIR" '${outer}/inner'`, changed(join(outer, 'inner'), 'now a symbolic link'));
  });

  it('when a home inside an allowed path is moved away and replaced by a link, then it is refused naming the home', async () => {
    const outer = realpathSync(tempDir());
    const { c, home } = await agent('h', () => [outer], join(outer, 'home-h'));
    expect(home).toBe(join(outer, 'home-h'));
    await swapThenRefused(c, home, `cd / && mv '${home}' '${home}.old' && ln -s "$SVC_DATA_DIR" '${home}'`, changed(home, 'now a symbolic link'));
  });

  it('when an agent is registered through a symbolic link, then GET /agents shows the real paths', async () => {
    const real = realpathSync(tempDir());
    const link = join(realpathSync(tempDir()), 'via-link');
    symlinkSync(real, link);
    const c = new LoomClient(d.base, 'rp');
    expect((await c.registerAgent({ agent_id: 'rp', sandbox: 'workspace', home: join(link, 'home'), allowed_paths: [link] })).status).toBe(200);
    const list = (await c.listAgents()).body.agents as unknown as Array<{ id: string; home: string; allowedPaths: string[] }>;
    expect(list.find((x) => x.id === 'rp')).toMatchObject({ home: join(real, 'home'), allowedPaths: [real] });
  });
});

suite('behaviour.md §15.4 the native side refuses a root reached through a link (a swap between the check and the spawn)', () => {
  it.each([['is a link', ''], ['lies below a link', '/sub']])("when the shells' wrapper is given a rule root that %s, then it refuses and runs nothing", async (_what, tail) => {
    const dir = realpathSync(tempDir());
    mkdirSync(join(dir, 'real', 'sub'), { recursive: true });
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const root = `${join(dir, 'link')}${tail}`;
    // The wrapper the daemon uses (prebuilt or built); the suite runs only where it is there.
    const wrapper = findExecutable('loom_sandbox') as string;
    const r = spawnSync(wrapper, ['--abi', '1', '--rw', root, '--ro', '/usr', '--ro', '/bin', '--ro', '/lib', '--', '/bin/sh', '-c', `touch '${dir}/real/ran'`], { encoding: 'utf8' });
    expect(r.status).toBe(126);
    expect(r.stderr).toBe(`loom_sandbox: rule root ${root}: Too many levels of symbolic links\n`);
    expect(existsSync(join(dir, 'real', 'ran'))).toBe(false);
  });
});

suite('behaviour.md §15.6 the daemon default follows the agents that did not choose', () => {
  let data = '';
  let w: RunningDaemon;
  const target = realpathSync(tempDir());
  beforeAll(async () => {
    if (reason) return;
    data = realpathSync(tempDir());
    const before = await startDaemon({ dataDir: data });
    started.push(before);
    for (const body of [{ agent_id: 'never' }, { agent_id: 'chose', sandbox: 'none' }, { agent_id: 'swapper', sandbox: 'none' }]) {
      expect((await new LoomClient(before.base, body.agent_id).registerAgent(body)).status).toBe(200);
    }
    await before.stop();
    w = await startDaemon({ dataDir: data, args: ['--sandbox', 'workspace'] });
    started.push(w);
  }, 30000);

  it('when the daemon restarts with --sandbox workspace, then GET /agents shows who follows the default and who chose', async () => {
    const list = (await new LoomClient(w.base).listAgents()).body.agents as unknown as Array<{ id: string; sandbox: string; sandbox_source: string }>;
    const modes = Object.fromEntries(list.map((x) => [x.id, [x.sandbox, x.sandbox_source]]));
    expect(modes).toEqual({ never: ['workspace', 'default'], chose: ['none', 'agent'], swapper: ['none', 'agent'] });
  });

  it('when the agent that never chose reads outside its workspace, then it is denied; the one that chose none reads it', async () => {
    const never = await run(new LoomClient(w.base, 'never'), 'main', '/exec cat "$SVC_DATA_DIR/agents.json"');
    expect(never.ok).toBe(false);
    expect(output(never.body).split('\n')[0]).toBe(`cat: ${data}/agents.json: Permission denied`);
    const chose = await run(new LoomClient(w.base, 'chose'), 'main', '/exec cat "$SVC_DATA_DIR/agents.json"');
    expect(chose.ok).toBe(true);
    expect(output(chose.body)).toContain('"never"');
  });

  it('when the private temp folder was replaced by a link while unconfined, then a confined command gets a real 0700 folder and the link target is untouched', async () => {
    writeFileSync(join(target, 'keep'), 'kept');
    const tmp = join(data, 'agents', 'swapper', 'tmp');
    const c = new LoomClient(w.base, 'swapper');
    expect((await run(c, 'main', `/exec rm -rf '${tmp}' && ln -s '${target}' '${tmp}' && echo linked`)).body).toMatch(/linked$/);
    expect((await c.registerAgent({ agent_id: 'swapper', sandbox: 'workspace' })).status).toBe(200);
    const r = await run(c, 'main', '/exec echo "$TMPDIR"; stat -c "%F %a" "$TMPDIR"; touch "$TMPDIR/planted" && echo planted');
    expect(output(r.body)).toBe(`${tmp}\ndirectory 700\nplanted`);
    const st = lstatSync(tmp);
    expect([st.isDirectory(), st.mode & 0o777]).toEqual([true, 0o700]);
    expect(readdirSync(target)).toEqual(['keep']);
  });
});

describe('behaviour.md §15.6 a data directory others can write stops the daemon with one line', () => {
  it.each([['0777', 0o777], ['0770', 0o770], ['0702', 0o702]])('when the data directory has mode %s, then exit 1 with one line naming it and how to fix it', async (shown, mode) => {
    const dir = tempDir();
    chmodSync(dir, mode);
    const r = await runCli(['daemon'], { SVC_DATA_DIR: dir, SVC_PORT: String(await freePort()) });
    expect(r).toEqual({ code: 1, stdout: '', stderr: `loom: data directory ${dir} is writable by others (mode ${shown}); fix it with chmod 700 ${dir}\n` });
  });
});
