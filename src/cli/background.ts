import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { client, cliPort, dataDir, type GlobalOpts } from './common.js';

const pidFile = () => join(dataDir(), 'loom.pid');

function readPid(): number | undefined {
  try {
    const pid = Number(readFileSync(pidFile(), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True when `pid` runs this CLI's `daemon` command (never signal an unrelated process that reused the pid). */
function isLoomDaemon(pid: number): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.includes('daemon') && argv.some((a) => a.endsWith('main.js'));
  } catch {
    // No /proc entry (gone, or not Linux): treat as not ours.
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function answers(opts: GlobalOpts): Promise<boolean> {
  try {
    return (await client(opts, false).health()).status === 200;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `loom start`: run the daemon in the background; idempotent; waits until it answers (10 s). */
export async function start(opts: GlobalOpts): Promise<number> {
  const port = cliPort(opts);
  if (await answers(opts)) {
    process.stdout.write(`loom is running on http://127.0.0.1:${port}\n`);
    return 0;
  }
  mkdirSync(dataDir(), { recursive: true, mode: 0o700 });
  const log = openSync(join(dataDir(), 'loom.log'), 'a', 0o600);
  const main = fileURLToPath(new URL('./main.js', import.meta.url));
  const child = spawn(process.execPath, [main, 'daemon', '--port', String(port)], { detached: true, stdio: ['ignore', log, log], env: process.env });
  closeSync(log);
  child.unref();
  writeFileSync(pidFile(), `${child.pid}\n`, { mode: 0o600 });
  for (let i = 0; i < 100; i++) {
    if (await answers(opts)) {
      process.stdout.write(`loom started on http://127.0.0.1:${port} (pid ${child.pid})\n`);
      return 0;
    }
    if (child.exitCode !== null || !alive(child.pid as number)) break;
    await sleep(100);
  }
  process.stderr.write(`loom: daemon did not start; see ${join(dataDir(), 'loom.log')}\n`);
  return 1;
}

/** `loom stop`: POST /shutdown, or SIGTERM the pid from the pid file. */
export async function stop(opts: GlobalOpts): Promise<number> {
  const pid = readPid();
  // Decided once: while shutting down, /proc/<pid>/cmdline empties, so it cannot be re-checked.
  const ours = pid !== undefined && alive(pid) && isLoomDaemon(pid);
  if (await answers(opts)) {
    await client(opts, false).shutdown();
  } else if (ours) {
    process.kill(pid as number, 'SIGTERM');
  } else {
    process.stdout.write('loom is not running\n');
    rmSync(pidFile(), { force: true });
    return 0;
  }
  for (let i = 0; i < 50 && ((await answers(opts)) || (ours && alive(pid as number))); i++) await sleep(100);
  rmSync(pidFile(), { force: true });
  process.stdout.write('loom stopped\n');
  return 0;
}

/** `loom status`: exit 0 when the daemon answers, 3 when not. */
export async function status(opts: GlobalOpts): Promise<number> {
  const port = cliPort(opts);
  if (!(await answers(opts))) {
    process.stdout.write(`loom is not running on port ${port}\n`);
    return 3;
  }
  const h = await client(opts, false).health();
  process.stdout.write(opts.json ? JSON.stringify(h.body) + '\n' : `loom is running on http://127.0.0.1:${port} · agents: ${h.body.agents} · sessions: ${h.body.sessions}\n`);
  return 0;
}
