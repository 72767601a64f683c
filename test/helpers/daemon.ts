import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './temp.js';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The temp-folder helper lives in helpers/temp.ts (unit tests use it); re-exported for the others. */
export { tempDir };

/** Path of the built CLI entry (tests run `npm run build` first: npm test does). */
export const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

/** A daemon process started by a black-box test. */
export interface RunningDaemon {
  proc: ChildProcess;
  port: number;
  dataDir: string;
  base: string;
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
}

/**
 * Start the built daemon (`node dist/cli/main.js daemon [args]`) on a free port with its own
 * SVC_DATA_DIR (a temp folder unless given) and wait for the ready line.
 */
export async function startDaemon(opts: { dataDir?: string; env?: Record<string, string>; port?: number; args?: string[] } = {}): Promise<RunningDaemon> {
  const port = opts.port ?? (await freePort());
  const dataDir = opts.dataDir ?? tempDir();
  const proc = spawn(process.execPath, [CLI, 'daemon', ...(opts.args ?? [])], {
    env: { ...process.env, SVC_PORT: String(port), SVC_DATA_DIR: dataDir, ...(opts.env ?? {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr?.on('data', (c: Buffer) => { err += c.toString(); });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`daemon did not start: ${out} ${err}`)), 15000);
    const check = () => {
      if (out.includes('loom listening on')) { clearTimeout(t); resolve(); }
    };
    proc.stdout?.on('data', check);
    proc.once('exit', (code) => { clearTimeout(t); reject(new Error(`daemon exited ${code}: ${err}`)); });
  });
  return {
    proc, port, dataDir, base: `http://127.0.0.1:${port}`,
    stdout: () => out, stderr: () => err,
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** Run the CLI to completion (in `cwd`, else the test's folder); returns exit code and output. */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 20000, cwd?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], cwd });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const t = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('exit', (code) => { clearTimeout(t); resolve({ code, stdout, stderr }); });
  });
}
