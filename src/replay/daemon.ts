import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How long a fresh daemon may take to print its ready line. */
const START_TIMEOUT_MS = 15000;
/** How long it may take to exit after POST /shutdown before it is killed. */
const STOP_TIMEOUT_MS = 5000;

/** A daemon `loom replay` started for itself (behaviour.md §14.3). */
export interface FreshDaemon {
  url: string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

/** Thrown when the fresh daemon does not come up (replay exits 2). */
export class DaemonStartError extends Error {}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Start a fresh daemon from this installation (the `loom` entry beside this module) on a free port
 * with a temp data folder, so agent homes are temp folders too; `stop()` shuts it down and removes
 * the folder.
 */
export async function startFreshDaemon(): Promise<FreshDaemon> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'loom-replay-'));
  const main = fileURLToPath(new URL('../cli/main.js', import.meta.url));
  // A pipe on stdin that only this process holds: when the replay ends in any way (EPIPE, a signal,
  // an exception, kill -9) the pipe closes and the daemon shuts itself down and removes its folder.
  const proc = spawn(process.execPath, [main, 'daemon', '--quiet', '--exit-with-stdin', '--remove-data-dir'], {
    env: { ...process.env, SVC_PORT: String(port), SVC_DATA_DIR: dataDir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.stderr.on('data', (c: Buffer) => { err += c.toString(); });
  const cleanup = () => rmSync(dataDir, { recursive: true, force: true });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new DaemonStartError(`the fresh daemon did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      proc.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('loom listening on')) { clearTimeout(timer); resolve(); }
      });
      proc.once('exit', (code) => { clearTimeout(timer); reject(new DaemonStartError(`the fresh daemon exited (${code}): ${err.trim()}`)); });
    });
  } catch (e) {
    proc.kill('SIGKILL');
    await exited;
    cleanup();
    throw e;
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    url, port, dataDir,
    async stop() {
      if (proc.exitCode === null) {
        // The end of stdin is the daemon's signal to shut down (behaviour.md §14.3: replay stops it).
        proc.stdin.end();
        const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      cleanup();
    },
  };
}
