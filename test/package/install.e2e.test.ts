import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { execPath } from 'node:process';
import { freePort, tempDir } from '../helpers/daemon.js';
import { cleanEnv, nodeHeaders, npmCli, npmPack, run } from '../helpers/pack.js';
import { startStubRegistry, type StubRegistry } from '../helpers/registry.js';

// Two real `npm install -g` runs (one compiles node-pty and Loom's helpers): minutes on a loaded machine.
jest.setTimeout(900_000);

/**
 * behaviour.md §17: the tarball installs as an ordinary user into a user prefix (`--prefix`, no
 * root folder touched), with and without a C++ toolchain, and the installed `loom` starts the
 * daemon, runs a command and stops it. Dependencies come from a stub registry on 127.0.0.1 that
 * serves what `npm ci` installed here: no network.
 */
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

  /** `npm install -g` of the tarball into `<dir>/<name>/prefix`, with the given PATH. */
  async function install(name: string, path: string) {
    const prefix = join(dir, name, 'prefix');
    const env = cleanEnv({
      PATH: path,
      HOME: join(dir, name, 'home'),
      npm_config_registry: registry.url,
      npm_config_cache: join(dir, name, 'npm-cache'),
      npm_config_prefix: prefix,
      // Headers of the Node that runs the tests (CI sets them per line): node-gyp must not go online.
      ...(nodeHeaders() ? { npm_config_nodedir: nodeHeaders() as string } : {}),
      npm_config_userconfig: join(dir, name, 'npmrc'),
    });
    delete env.PYTHON;
    mkdirSync(env.HOME as string, { recursive: true });
    const r = await run(execPath, [npmCli(), 'install', '-g', tarball, '--foreground-scripts'], { env });
    return { ...r, prefix, env, pkg: join(prefix, 'lib', 'node_modules', 'loom') };
  }

  /** The installed `loom` start → a command → `/describe` → stop, on its own port and data dir. */
  async function session(prefix: string, env: NodeJS.ProcessEnv) {
    const port = await freePort();
    const loomEnv = { ...env, SVC_PORT: String(port), SVC_DATA_DIR: join(prefix, '..', 'data') };
    const loom = (...args: string[]) => run(join(prefix, 'bin', 'loom'), args, { env: loomEnv, timeoutMs: 120_000 });
    const started = await loom('start');
    try {
      expect(started).toMatchObject({ code: 0 });
      expect(await loom('agent', 'add', 'leo')).toMatchObject({ code: 0 });
      const exec = await loom('--agent', 'leo', 'main', '/exec', 'echo installed-$((40+2))');
      const bash = await loom('--agent', 'leo', 'bash:b', '/exec', 'X=7; echo "x=$X"');
      const describe = await (await fetch(`http://127.0.0.1:${port}/describe`)).json() as { capabilities: Record<string, unknown> };
      return { exec, bash, describe };
    } finally {
      const stopped = await loom('stop');
      expect(stopped).toMatchObject({ code: 0 });
      expect((await loom('status')).code).toBe(3);
    }
  }

  it('with a toolchain: installs, builds the native parts, and the installed loom starts, runs a command and stops', async () => {
    const r = await install('with', process.env.PATH as string);
    expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(existsSync(join(r.pkg, 'build', 'Release', 'loom_spawn.node'))).toBe(true);
    expect(existsSync(join(r.pkg, 'node_modules', 'node-pty'))).toBe(true);
    expect(existsSync(join(r.pkg, 'test'))).toBe(false);
    const { exec, bash, describe } = await session(r.prefix, r.env);
    expect(exec.stdout).toBe('exit: 0 | cwd: ~\n---\ninstalled-42\n');
    expect(bash.stdout).toBe('exit: 0 | cwd: ~\n---\nx=7\n');
    expect(describe.capabilities).toHaveProperty('bash', { pty: true });
  });

  it('without a compiler, make or python: the install still succeeds, and the daemon serves /exec and bash topics on pipes, /describe says pty false', async () => {
    // A PATH with node and a shell only: node-gyp finds no Python, make or C++ compiler.
    const bin = join(dir, 'bare-bin');
    mkdirSync(bin, { recursive: true });
    for (const [name, target] of [['node', execPath], ['sh', '/bin/sh'], ['bash', '/bin/bash']]) symlinkSync(target, join(bin, name));
    const r = await install('bare', bin);
    expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout + r.stderr).toContain('loom: the native helpers (native/*.cc) were not built');
    expect(existsSync(join(r.pkg, 'build', 'Release', 'loom_spawn.node'))).toBe(false);
    expect(existsSync(join(r.pkg, 'node_modules', 'node-pty'))).toBe(false);
    const { exec, bash, describe } = await session(r.prefix, r.env);
    expect(exec.stdout).toBe('exit: 0 | cwd: ~\n---\ninstalled-42\n');
    expect(bash.stdout).toBe('exit: 0 | cwd: ~\n---\nx=7\n');
    expect(describe.capabilities).toHaveProperty('bash', { pty: false });
    expect(describe.capabilities).not.toHaveProperty('bash-pty');
  });
});
