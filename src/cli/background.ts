import { spawn } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WIRES } from '../domain/wire.js';
import { NotLoom } from '../client/index.js';
import { CliFailure, client, cliPort, cliWire, dataDir, examples, globals, guard, print, type CliParts, type GlobalOpts } from './common.js';
import { daemonOptionArgs, daemonOptions } from './daemon.js';

/*
 * The pid and log files of `loom start`; a daemon of the user wire has its own (behaviour.md §11:
 * both wires may run on one data directory and share no state), chosen by `--wire user`.
 */
const files = (opts: GlobalOpts) => WIRES[cliWire(opts) ?? 'agent'].files;
const pidFile = (opts: GlobalOpts) => join(dataDir(), files(opts).pid);
const logFile = (opts: GlobalOpts) => join(dataDir(), files(opts).daemonLog);

function readPid(opts: GlobalOpts): number | undefined {
  try {
    const pid = Number(readFileSync(pidFile(opts), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    // No pid file: nothing was started with `loom start` (or it was cleaned up).
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
    // ESRCH (gone) or EPERM (not ours): either way not a daemon we can manage.
    return false;
  }
}

/** The pid of the daemon `loom start` left running, when it is still that daemon. */
function ourPid(opts: GlobalOpts): number | null {
  const pid = readPid(opts);
  return pid !== undefined && alive(pid) && isLoomDaemon(pid) ? pid : null;
}

/** The daemon's version when it answers on the port, else null; NotLoom when something else holds the port. */
async function answering(opts: GlobalOpts): Promise<string | null> {
  let r;
  try {
    r = await client(opts, false).describe();
  } catch (err) {
    if (err instanceof NotLoom) throw err;
    // Not reachable: not running (on this port).
    return null;
  }
  if (r.status === 200 && r.body.name === 'loom') return String(r.body.version);
  throw new NotLoom(`http://127.0.0.1:${cliPort(opts)}`, `GET /describe answered HTTP ${r.status} without Loom's name`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A progress line on stderr (not with --json: stdout carries the one JSON document, stderr errors only). */
const progress = (opts: GlobalOpts, line: string) => { if (!opts.json) process.stderr.write(line + '\n'); };

/** Wait up to `ms` for `done()`, telling the user every 2 s that it is still waiting. */
async function waitFor(opts: GlobalOpts, what: string, ms: number, done: () => Promise<boolean>): Promise<boolean> {
  const started = Date.now();
  let told = started;
  while (Date.now() - started < ms) {
    if (await done()) return true;
    if (Date.now() - told >= 2000) {
      told = Date.now();
      progress(opts, `… still ${what} (${Math.round((told - started) / 1000)} s)`);
    }
    await sleep(100);
  }
  return done();
}

/** How much of the log's end `loom start` reads for the reason of a failed start. */
const START_LOG_TAIL = 16 * 1024;

/**
 * Why a daemon that exited at start-up failed: the last line it wrote to its log after `from`
 * (`loom: port 3930 is in use` → `port 3930 is in use`), or null when it wrote none.
 */
export function startFailure(log: string, from: number): string | null {
  let text: string;
  try {
    // Only the tail of what this start appended: the reason is in its last lines.
    const size = statSync(log).size;
    const start = Math.max(from, size - START_LOG_TAIL);
    const buf = Buffer.alloc(Math.max(0, size - start));
    const fd = openSync(log, 'r');
    try { readSync(fd, buf, 0, buf.length, start); } finally { closeSync(fd); }
    text = buf.toString('utf8');
  } catch {
    // No log to read: the generic message (with the log's path) is all there is.
    return null;
  }
  // The daemon's own reason (`loom: …`) when it gave one, else whatever it wrote last.
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const last = lines.filter((l) => l.startsWith('loom: ')).pop() ?? lines.pop();
  return last ? last.replace(/^loom: /, '').slice(0, 300) : null;
}

/**
 * `loom start`: run the daemon in the background; idempotent; waits until it answers (10 s).
 * `daemonArgs`: the daemon's own options given to `loom start` (cli/daemon.ts `daemonOptions`).
 */
export async function start(opts: GlobalOpts, daemonArgs: string[] = []): Promise<number> {
  const port = cliPort(opts);
  const url = `http://127.0.0.1:${port}`;
  // Something else on the port: the daemon's own start-up says so ("port … is in use"), with its log.
  const already = await answering(opts).catch((err: unknown) => {
    if (err instanceof NotLoom) return null;
    throw err;
  });
  if (already !== null) {
    print(opts, { running: true, started: false, pid: ourPid(opts), port }, `loom is already running on ${url}`);
    return 0;
  }
  mkdirSync(dataDir(), { recursive: true, mode: 0o700 });
  const log = openSync(logFile(opts), 'a', 0o600);
  const logStart = fstatSync(log).size;
  const main = fileURLToPath(new URL('./main.js', import.meta.url));
  const wire = cliWire(opts);
  const child = spawn(process.execPath, [main, 'daemon', '--port', String(port), ...(wire ? ['--wire', wire] : []), ...daemonArgs], { detached: true, stdio: ['ignore', log, log], env: process.env });
  closeSync(log);
  child.unref();
  writeFileSync(pidFile(opts), `${child.pid}\n`, { mode: 0o600 });
  progress(opts, `Starting loom on ${url} (pid ${child.pid}, log ${logFile(opts)}); waiting for it to answer…`);
  const exited = () => child.exitCode !== null || !alive(child.pid as number);
  const up = await waitFor(opts, 'waiting for the daemon to answer', 10_000, async () => (await answering(opts).catch(() => null)) !== null || exited());
  if (!up || exited()) {
    rmSync(pidFile(opts), { force: true });
    const reason = up ? startFailure(logFile(opts), logStart) : null;
    throw new CliFailure({ error: `daemon did not start${reason ? `: ${reason}` : ''}`, code: 'START_FAILED', message: `see ${logFile(opts)}` });
  }
  print(opts, { running: true, started: true, pid: child.pid, port }, `loom started on ${url} (pid ${child.pid})`);
  return 0;
}

/** `loom stop`: POST /shutdown, or SIGTERM the pid from the pid file; waits until it is gone (5 s). */
export async function stop(opts: GlobalOpts): Promise<number> {
  const port = cliPort(opts);
  // Decided once: while shutting down, /proc/<pid>/cmdline empties, so it cannot be re-checked.
  const pid = ourPid(opts);
  // Something that is not Loom on the port is not ours to stop.
  const up = (await answering(opts).catch((err: unknown) => {
    if (err instanceof NotLoom) return null;
    throw err;
  })) !== null;
  if (!up && pid === null) {
    rmSync(pidFile(opts), { force: true });
    print(opts, { stopped: false, running: false, port }, `loom is not running on port ${port}`);
    return 0;
  }
  progress(opts, `Stopping loom on http://127.0.0.1:${port}${pid !== null ? ` (pid ${pid})` : ''}; waiting for it to exit…`);
  if (up) await client(opts, false).shutdown();
  else process.kill(pid as number, 'SIGTERM');
  const gone = await waitFor(opts, 'waiting for the daemon to exit', 5000, async () => (await answering(opts).catch(() => null)) === null && (pid === null || !alive(pid)));
  if (!gone) throw new CliFailure({ error: 'daemon did not stop within 5 s', code: 'STOP_FAILED', message: pid !== null ? `kill it with: kill ${pid}` : `see ${logFile(opts)}` });
  rmSync(pidFile(opts), { force: true });
  print(opts, { stopped: true, running: false, port }, 'loom stopped');
  return 0;
}

/** `loom status`: `{running, pid, port, version}`; exit 0 when the daemon answers, 3 when not. */
export async function status(opts: GlobalOpts): Promise<number> {
  const port = cliPort(opts);
  let version: string | null;
  try {
    version = await answering(opts);
  } catch (err) {
    if (!(err instanceof NotLoom)) throw err;
    print(opts, { running: false, pid: null, port, version: null, not_loom: err.what }, `loom is not running on port ${port}: the port is held by something that is not Loom (${err.what})`);
    return 3;
  }
  const pid = ourPid(opts);
  if (version === null) {
    print(opts, { running: false, pid: null, port, version: null }, `loom is not running on port ${port}`);
    return 3;
  }
  const h = await client(opts, false).health();
  // The user wire counts users (behaviour.md §11).
  const counts = h.body.users !== undefined ? `users: ${h.body.users} · sessions: ${h.body.sessions}` : `agents: ${h.body.agents} · sessions: ${h.body.sessions}`;
  print(opts, { running: true, pid, port, version }, `loom ${version} is running on http://127.0.0.1:${port}${pid !== null ? ` (pid ${pid})` : ''} · ${counts}`);
  return 0;
}

/** `loom start`, `loom stop`, `loom status` (behaviour.md §2.13). */
export function backgroundCli({ program }: CliParts): void {
  const g = () => globals(program);
  const startCmd = program.command('start').description('Start the daemon in the background (idempotent); waits until it answers; takes every option of loom daemon');
  for (const o of daemonOptions()) startCmd.addOption(o);
  examples(startCmd, [
    'loom start', 'loom --port 4000 start', 'loom start --wire user', 'loom start --sandbox workspace',
  ]).action((o: Record<string, unknown>) => {
    // The wire also names the pid and log files, so it joins the global options; the rest go to the daemon.
    const opts = { ...g(), wire: typeof o.wire === 'string' ? o.wire : g().wire };
    return guard(opts, () => start(opts, daemonOptionArgs({ ...o, wire: undefined })));
  });
  examples(program.command('stop').description('Stop the daemon; waits until it has exited'), ['loom stop']).action(() => guard(g(), () => stop(g())));
  examples(program.command('status').description('Tell whether the daemon answers (exit 0 when it does, 3 when not)'), [
    'loom status', 'loom status --json   # {"running", "pid", "port", "version"}',
  ]).action(() => guard(g(), () => status(g())));
}
