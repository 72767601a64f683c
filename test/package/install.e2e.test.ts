import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execPath } from 'node:process';
import { freePort, tempDir } from '../helpers/daemon.js';
import { cleanEnv, nodeHeaders, npmCli, npmPack, run } from '../helpers/pack.js';
import { startStubRegistry, type StubRegistry } from '../helpers/registry.js';
import { kernelLandlockAbi } from '../sandbox/support.js';

// Three real `npm install -g` runs (one compiles node-pty): minutes on a loaded machine.
jest.setTimeout(900_000);

/**
 * behaviour.md §17: the tarball installs as an ordinary user into a user prefix (`--prefix`, no
 * root folder touched), with the command the README documents, and the installed `loom` starts the
 * daemon, runs a command, a shell and a sandboxed agent, and stops. With a toolchain and without
 * one, the prebuilt native parts serve (nothing is compiled for Loom); with no prebuilt part for
 * this machine and no toolchain, one install line, /describe and the refusal name the missing part.
 * Dependencies come from a stub registry on 127.0.0.1 that serves what `npm ci` installed here.
 */
const TARGET = `${process.platform}-${process.arch}`;
/** The kernel offers Landlock: an installed Loom with its parts must then have the sandbox. */
const landlock = kernelLandlockAbi() > 0;

interface Describe {
  capabilities: Record<string, unknown>;
  sandbox: { available: boolean; missing: Array<{ guarantee: string; reason: string }> };
  native: Record<string, { loaded: boolean; source?: string; reason?: string }>;
}

describe('npm install -g <tarball> --prefix <dir> (behaviour.md §17)', () => {
  const dir = tempDir('loom-install-');
  let registry: StubRegistry;
  let tarball: string;

  beforeAll(async () => {
    registry = await startStubRegistry();
    // The tests run on the build in dist/ (npm test builds first); pack.e2e.test.ts checks that prepack builds it.
    tarball = (await npmPack(process.cwd(), dir, ['--ignore-scripts'])).filename;
  });
  afterAll(async () => {
    await registry?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A PATH with node and a shell only: node-gyp finds no Python, make or C++ compiler. */
  function barePath(): string {
    const bin = join(dir, 'bare-bin');
    if (!existsSync(bin)) {
      mkdirSync(bin, { recursive: true });
      for (const [name, target] of [['node', execPath], ['sh', '/bin/sh'], ['bash', '/bin/bash']]) symlinkSync(target, join(bin, name));
    }
    return bin;
  }

  /**
   * The words after `npm install -g` in the README's install block, with its tarball (`./loom-0.1.0.tgz`
   * or `$PWD/loom-0.1.0.tgz`) replaced by `pkg`: the documented command itself is what must be quiet.
   */
  function documentedArgs(pkg: string): string[] {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    const line = /^npm install -g (.+?)\s*(?:#.*)?$/m.exec(readme);
    if (!line) throw new Error('README has no npm install -g line');
    return (line[1].match(/(?:[^\s"]+|"[^"]*")+/g) ?? []).map((w) => w.replace(/"/g, '').replace(/(\$PWD\/|\.\/)loom-0\.1\.0\.tgz/g, pkg));
  }

  /**
   * The README's command (npm 11 allows a tarball's scripts by its absolute path; npm 10 ignores the
   * flag), into `<dir>/<name>/prefix`. `toolchain: false`: the bare PATH and Node headers that do not exist.
   */
  async function install(name: string, pkg: string, toolchain: boolean) {
    const prefix = join(dir, name, 'prefix');
    const headers = toolchain ? nodeHeaders() : join(dir, name, 'no-headers');
    const env = cleanEnv({
      PATH: toolchain ? process.env.PATH as string : barePath(),
      HOME: join(dir, name, 'home'),
      npm_config_registry: registry.url,
      npm_config_cache: join(dir, name, 'npm-cache'),
      npm_config_prefix: prefix,
      // Headers of the Node that runs the tests (CI sets them per line): node-gyp must not go online.
      ...(headers ? { npm_config_nodedir: headers } : {}),
      npm_config_userconfig: join(dir, name, 'npmrc'),
    });
    delete env.PYTHON;
    mkdirSync(env.HOME as string, { recursive: true });
    if (headers) mkdirSync(headers, { recursive: true });
    const r = await run(execPath, [npmCli(), 'install', '-g', ...documentedArgs(pkg), '--foreground-scripts'], { env });
    return { ...r, prefix, env, pkg: join(prefix, 'lib', 'node_modules', 'loom') };
  }

  /** The installed `loom` start → a command, a shell, a workspace agent → `/describe` → stop, on its own port and data dir. */
  async function session(prefix: string, env: NodeJS.ProcessEnv) {
    const port = await freePort();
    // A file the user may read, outside the agent's workspace: a confined agent must not (a bash builtin reads it: the bare PATH has no ls or cat).
    const outside = join(prefix, '..', 'outside.txt');
    writeFileSync(outside, 'not for agents\n');
    const loomEnv = { ...env, SVC_PORT: String(port), SVC_DATA_DIR: join(prefix, '..', 'data') };
    const loom = (...args: string[]) => run(join(prefix, 'bin', 'loom'), args, { env: loomEnv, timeoutMs: 120_000 });
    const started = await loom('start');
    try {
      expect(started).toMatchObject({ code: 0 });
      expect(await loom('agent', 'add', 'leo')).toMatchObject({ code: 0 });
      expect(await loom('agent', 'add', 'box', '--sandbox', 'workspace')).toMatchObject({ code: 0 });
      const exec = await loom('--agent', 'leo', 'main', '/exec', 'echo installed-$((40+2))');
      const bash = await loom('--agent', 'leo', 'bash:b', '/exec', 'X=7; echo "x=$X"');
      const boxed = await loom('--agent', 'box', 'main', '/exec', `echo boxed; read line < '${outside}'; echo "$line"`);
      const describe = await (await fetch(`http://127.0.0.1:${port}/describe`)).json() as Describe;
      return { exec, bash, boxed, describe, outside };
    } finally {
      const stopped = await loom('stop');
      expect(stopped).toMatchObject({ code: 0 });
      expect((await loom('status')).code).toBe(3);
    }
  }

  /** What every install prints on npm 11 for scripts it was not told to allow: never, with the documented command. */
  const NOT_ALLOWED = 'not yet covered by allowScripts';

  it('with a toolchain: the documented command installs quietly, nothing of Loom is compiled, and the prebuilt parts serve', async () => {
    const r = await install('with', tarball, true);
    expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout + r.stderr).not.toContain(NOT_ALLOWED);
    expect(r.stdout + r.stderr).not.toContain('loom: native parts missing');
    expect(existsSync(join(r.pkg, 'build'))).toBe(false);
    expect(existsSync(join(r.pkg, 'prebuilds', TARGET, 'loom_spawn.node'))).toBe(true);
    expect(existsSync(join(r.pkg, 'test'))).toBe(false);
    const { exec, bash, describe } = await session(r.prefix, r.env);
    expect(exec.stdout).toBe('exit: 0 | cwd: ~\n---\ninstalled-42\n');
    expect(bash.stdout).toBe('exit: 0 | cwd: ~\n---\nx=7\n');
    expect(describe.capabilities).toHaveProperty('bash', { pty: true });
    for (const part of ['loom_spawn', 'loom_fd', 'loom_sandbox', 'node-pty']) expect(describe.native[part]).toEqual({ loaded: true, source: 'prebuilt' });
    expect(describe.sandbox.available).toBe(landlock);
  });

  it('without a compiler, make, python or Node headers: the install succeeds quietly, and the PTY, the fast spawn and the sandbox come from the prebuilt parts', async () => {
    const r = await install('bare', tarball, false);
    expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout + r.stderr).not.toContain(NOT_ALLOWED);
    expect(r.stdout + r.stderr).not.toContain('loom: native parts missing');
    expect(existsSync(join(r.pkg, 'build'))).toBe(false);
    // npm removed node-pty, whose binding could not compile; Loom's bundled copy drives the prebuilt one.
    expect(existsSync(join(r.pkg, 'node_modules', 'node-pty'))).toBe(false);
    const { exec, bash, boxed, describe, outside } = await session(r.prefix, r.env);
    expect(exec.stdout).toBe('exit: 0 | cwd: ~\n---\ninstalled-42\n');
    expect(bash.stdout).toBe('exit: 0 | cwd: ~\n---\nx=7\n');
    expect(describe.capabilities).toHaveProperty('bash', { pty: true });
    expect(describe.capabilities).toHaveProperty('bash-pty');
    expect(describe.native['node-pty']).toEqual({ loaded: true, source: 'prebuilt' });
    expect(describe.sandbox.available).toBe(landlock);
    if (landlock) expect(boxed.stdout + boxed.stderr).toContain(`${outside}: Permission denied`);
    if (landlock) expect(boxed.stdout + boxed.stderr).not.toContain('not for agents');
  });

  it('without a prebuilt part for this machine and without a toolchain: one install line names the missing parts, /describe and a workspace agent\'s refusal name them', async () => {
    // The same tarball less this machine's prebuilt parts, as on a machine no prebuilt part fits.
    const unpacked = join(dir, 'noprebuilt');
    mkdirSync(unpacked, { recursive: true });
    expect((await run('tar', ['xzf', tarball, '-C', unpacked])).code).toBe(0);
    rmSync(join(unpacked, 'package', 'prebuilds', TARGET), { recursive: true });
    const stripped = join(dir, 'loom-noprebuilt.tgz');
    expect((await run('tar', ['czf', stripped, '-C', unpacked, 'package'])).code).toBe(0);
    const r = await install('none', stripped, false);
    expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = (r.stdout + r.stderr).split('\n').filter((l) => l.startsWith('loom: '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^loom: native parts missing: loom_spawn, loom_fd, loom_sandbox \\(no prebuilt part for ${TARGET}; local build failed: .+\\): without them .*; node-pty \\(no prebuilt part for ${TARGET}, and node-pty's own install did not succeed\\): without it bash topics run on pipes$`));
    const { exec, bash, boxed, describe } = await session(r.prefix, r.env);
    expect(exec.stdout).toBe('exit: 0 | cwd: ~\n---\ninstalled-42\n');
    expect(bash.stdout).toBe('exit: 0 | cwd: ~\n---\nx=7\n');
    expect(describe.capabilities).toHaveProperty('bash', { pty: false });
    expect(describe.native.loom_spawn).toEqual({ loaded: false, reason: `no prebuilt loom_spawn.node for ${TARGET} and no local build` });
    expect(describe.native.loom_sandbox.loaded).toBe(false);
    expect(describe.sandbox.available).toBe(false);
    const why = `Loom's native part loom_spawn is missing: no prebuilt loom_spawn.node for ${TARGET} and no local build`;
    expect(describe.sandbox.missing).toContainEqual({ guarantee: 'files', reason: why });
    expect(boxed).toMatchObject({ code: 1, stdout: '' });
    expect(boxed.stderr).toBe(`ERROR(SANDBOX_UNAVAILABLE): this system cannot enforce files (${why}); the agent's commands were not run\n`);
    expect(boxed.stderr).not.toContain('kernel');
  });
});
