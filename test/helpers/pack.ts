import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { execPath } from 'node:process';

/** What `npm pack --json` says of one tarball. */
export interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string; size: number }[];
}

/**
 * The npm CLI script, run through this Node (so a PATH without npm still works): the npm beside this
 * Node, else the one on PATH (a Node fetched without npm, as CI's other lines are).
 */
export function npmCli(): string {
  const beside = join(execPath, '..', '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
  if (existsSync(beside)) return realpathSync(beside);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'npm'))) return join(dirname(realpathSync(join(dir, 'npm'))), 'npm-cli.js');
  }
  throw new Error('npm not found beside node or on PATH');
}

/** The Node headers node-gyp must build against, without going online: npm_config_nodedir, else this Node's own prefix when it has them. */
export function nodeHeaders(): string | undefined {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  const prefix = dirname(dirname(execPath));
  return existsSync(join(prefix, 'include', 'node', 'node.h')) ? prefix : undefined;
}

/**
 * An environment for child npm and loom processes: the test runner's, without npm's own
 * per-run settings (npx sets npm_config_*), jest's Node flags, or the daemon settings of the
 * surrounding shell.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) || k === 'NODE_OPTIONS' || k.startsWith('SVC_') || k.startsWith('LOOM_') || k.startsWith('JEST_')) continue;
    env[k] = v;
  }
  return { ...env, NODE_DISABLE_COMPILE_CACHE: '1', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...extra };
}

/** Run a program to completion; output is kept for the failure message. */
export function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const t = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs ?? 600_000);
    p.on('close', (code) => { clearTimeout(t); resolve({ code, stdout, stderr }); });
  });
}

/** `npm pack --json` in `cwd`, the tarball written to `dest`. */
export async function npmPack(cwd: string, dest: string, extraArgs: string[] = []): Promise<PackResult> {
  const r = await run(execPath, [npmCli(), 'pack', '--json', '--pack-destination', dest, ...extraArgs], { cwd });
  if (r.code !== 0) throw new Error(`npm pack failed (${r.code}): ${r.stderr}`);
  // Lifecycle scripts (prepack) print to stdout before the JSON: the JSON is the last top-level array.
  const start = r.stdout.lastIndexOf('\n[\n') >= 0 ? r.stdout.lastIndexOf('\n[\n') + 1 : r.stdout.indexOf('[');
  const [entry] = JSON.parse(r.stdout.slice(start)) as PackResult[];
  return { ...entry, filename: join(dest, entry.filename) };
}

/** The parts of the project a build needs, copied to `dir` (no dist/, no build/), with the project's node_modules linked in. */
export function copyProject(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const name of ['src', 'scripts', 'bin', 'web', 'native', 'prebuilds', 'docs', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'binding.gyp', 'README.md', 'LICENSE']) {
    cpSync(join(process.cwd(), name), join(dir, name), { recursive: true });
  }
  symlinkSync(join(process.cwd(), 'node_modules'), join(dir, 'node_modules'));
  return dir;
}
