// Shared bench helpers: start the built daemon on a free port, machine description, result writing.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

/**
 * The Node flags a build starts its daemon with: none now (the daemon sizes its heap at run time,
 * src/effects/heapTuning.ts); an earlier build, run as BENCH_COMPARE_ROOT, listed them in
 * dist/cli/daemonFlags.js, and is measured with them, as its `loom start` ran it.
 */
async function daemonFlagsOf(buildRoot) {
  const file = join(buildRoot, 'dist/cli/daemonFlags.js');
  return existsSync(file) ? (await import(file)).DAEMON_NODE_FLAGS : [];
}

/** Data folders this bench made: removed when it exits (a bench restarts daemons on them until then). */
const madeDirs = [];
process.once('exit', () => { for (const d of madeDirs) rmSync(d, { recursive: true, force: true }); });
function madeDataDir() {
  const d = mkdtempSync(join(tmpdir(), 'loom-bench-'));
  madeDirs.push(d);
  return d;
}

/**
 * Start dist/cli/main.js daemon with a temp SVC_DATA_DIR (and extra Node flags, e.g. --cpu-prof);
 * resolves when ready. `opts.root` runs another checkout's build; `opts.dataDir` reuses a data folder.
 */
export async function startDaemon(env = {}, nodeArgs = [], opts = {}) {
  const port = await freePort();
  const dataDir = opts.dataDir ?? madeDataDir();
  const started = process.hrtime.bigint();
  // Each build measured with the Node flags its own `loom start` used.
  const flags = opts.root ? await daemonFlagsOf(opts.root) : [];
  const proc = spawn(process.execPath, [...flags, ...nodeArgs, join(opts.root ?? root, 'dist/cli/main.js'), 'daemon'], {
    env: { ...process.env, SVC_PORT: String(port), SVC_DATA_DIR: dataDir, ...env }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (c) => { out += c; if (out.includes('listening')) resolve(); });
    proc.once('exit', (c) => reject(new Error(`daemon exited ${c}`)));
  });
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
  // CPU time spent up to the ready line: what a cold start costs the process itself, whatever else runs on the machine.
  const readyCpuMs = cpuMs(proc.pid);
  return { port, pid: proc.pid, dataDir, readyMs, readyCpuMs, base: `http://127.0.0.1:${port}`, stop: () => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); }) };
}

/** "<cpu model> ×<n>, <GiB> GiB RAM, Node <v>" */
export function machine() {
  return `${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}`;
}

/** The Node release line running this bench, e.g. 24: results are kept per line. */
export const nodeLine = Number(process.versions.node.split('.')[0]);

/**
 * Write bench/results/<name>.node<line>.md with a header naming machine, date, Node version and
 * command. One file per area and Node line: a run on Node 24 never erases the Node 20 figures.
 */
export function writeResult(name, title, body) {
  const text = `## ${title} — Node ${nodeLine}\n\n- Machine: ${machine()}\n- Date: ${new Date().toISOString()}\n- Command: \`npm run bench -- ${name}\` (node ${process.version})\n\n${body.trim()}\n`;
  writeFileSync(join(root, 'bench', 'results', `${name}.node${nodeLine}.md`), text);
  console.log(text);
}

/** Start a helper server script (`node <script> ...args`) in a process of its own; resolves once it prints `listening`. */
export async function startServer(script, args) {
  const proc = spawn(process.execPath, [join(root, 'bench', script), ...args.map(String)], { stdio: ['ignore', 'pipe', 'inherit'] });
  // `listening` or `listening <port>`.
  const port = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (c) => { out += c; if (out.includes('listening')) resolve(Number(/listening (\d+)/.exec(out)?.[1] ?? 0) || undefined); });
    proc.once('exit', (c) => reject(new Error(`${script} exited ${c}`)));
  });
  return { pid: proc.pid, port, stop: () => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); }) };
}

/** Median of a list of numbers. */
export function median(list) {
  const s = [...list].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** A percentile (0–100) of a list of numbers (nearest rank). */
export function percentile(list, p) {
  const s = [...list].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** Resident set size of a process in MiB (VmRSS of /proc/<pid>/status). */
export function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU time (user + system) a process has used so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
