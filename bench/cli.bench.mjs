// CLI call cost: one `loom --agent a main /help` (what an agent host runs per tool call) against a bare
// `node -e 0` started the same way, alternating call by call; wall time, CPU time and peak RSS of each
// child. Also `loom --version` (a request too), `loom --help` (the command tree, no request) and a bare
// node:http client sending the same request (bench/cli-bare.mjs): the floor for a call that does HTTP.
// Then one --cpu-prof run of the loom call and of the bare start: where the CPU time goes.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, percentile, root, startDaemon, writeResult } from './common.mjs';
import { summarise } from './profile.mjs';

const ROUNDS = Number(process.env.BENCH_CLI_ROUNDS ?? 40);
const WARMUP = 3;
const TARGET_RATIO = 1.6;
const TARGET_RSS_MIB = 55;
const TIME = '/usr/bin/time';
const haveTime = existsSync(TIME);

// The Node flags of the `loom` command's own line (bin/loom.js: `#!/usr/bin/env -S node <flags>`).
const bin = join(root, 'bin', 'loom.js');
/** A V8 flag that is in the hash V8 checks Node's own code cache against on Node 20 and 22. */
const V8_FLAG = ['--max-semi-space-size=4'];
const shebangFlags = readFileSync(bin, 'utf8').split('\n')[0].replace(/^#!.*?\bnode\b/, '').trim().split(/\s+/).filter(Boolean);

const d = await startDaemon();
const load0 = loadavg()[0];
// Without NODE_EXTRA_CA_CERTS, as on a user's machine: Node 20 reads that file at every start, before
// any of the script's code (the machine this bench runs on sets it). BENCH_CLI_CA=1 keeps it.
const env = { ...process.env, SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir };
if (process.env.BENCH_CLI_CA !== '1') delete env.NODE_EXTRA_CA_CERTS;
const reg = await fetch(`${d.base}/agents`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_id: 'a' }) });
if (reg.status !== 200) throw new Error(`register: HTTP ${reg.status}`);

const loom = (...args) => [...shebangFlags, bin, ...args];
// BENCH_CLI_BEFORE=<another checkout, built>: its `loom` call as one more path, e.g. the build before a
// change; BENCH_CLI_BEFORE_NAME names it in the table.
const before = process.env.BENCH_CLI_BEFORE;
const beforeName = process.env.BENCH_CLI_BEFORE_NAME ?? before;
const paths = [
  { key: 'bare', label: '`node -e 0` (baseline)', args: ['-e', '0'] },
  { key: 'exec', label: '`loom --agent a main /help`', args: loom('--agent', 'a', 'main', '/help') },
  // What a V8 flag on the command's line would cost (the young-generation cap bin/loom.js once carried).
  { key: 'flags', label: '`loom --agent a main /help` with a V8 flag on its line (`--max-semi-space-size=4`)', args: [...V8_FLAG, bin, '--agent', 'a', 'main', '/help'] },
  { key: 'version', label: '`loom --version` (CLI and daemon versions: one request)', args: loom('--version') },
  { key: 'help', label: '`loom --help` (the command tree, no request)', args: loom('--help') },
  ...(before ? [{ key: 'before', label: `\`loom --agent a main /help\` of ${beforeName}`, args: [...shebangFlags, join(before, 'bin', 'loom.js'), '--agent', 'a', 'main', '/help'] }] : []),
  { key: 'http', label: 'bare node:http client, same POST /exec (bench/cli-bare.mjs, an ES module)', args: [join(root, 'bench', 'cli-bare.mjs'), String(d.port), 'a', 'main', '/help'] },
  { key: 'httpCjs', label: 'bare node:http client, same POST /exec (bench/cli-bare.cjs, CommonJS)', args: [join(root, 'bench', 'cli-bare.cjs'), String(d.port), 'a', 'main', '/help'] },
];

/**
 * One call: wall time from spawn to exit (ms), and, under /usr/bin/time (every path alike), the
 * child's peak RSS (MiB) and CPU time (ms; 10 ms resolution).
 */
function call(args) {
  return new Promise((resolve, reject) => {
    const argv = haveTime ? ['-f', '\nBENCH %M %U %S', process.execPath, ...args] : args;
    const t0 = process.hrtime.bigint();
    const p = spawn(haveTime ? TIME : process.execPath, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (c) => { out += c; });
    p.stderr.on('data', (c) => { err += c; });
    p.once('error', reject);
    p.once('close', (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}: ${err}`));
      const m = /BENCH (\d+) ([\d.]+) ([\d.]+)\s*$/.exec(err);
      resolve({ ms, out, rss: m ? Number(m[1]) / 1024 : NaN, cpu: m ? (Number(m[2]) + Number(m[3])) * 1000 : NaN });
    });
  });
}

// The loom call answers what the daemon's /help says (a broken CLI must not pass for a fast one).
const check = await call(paths[1].args);
if (!check.out.startsWith('Loom commands')) throw new Error(`unexpected loom output: ${check.out.slice(0, 200)}`);

const runs = Object.fromEntries(paths.map((p) => [p.key, []]));
for (let r = 0; r < WARMUP + ROUNDS; r++) {
  // Each round starts at another path, so that none always runs first after the bench process's own work.
  for (let i = 0; i < paths.length; i++) {
    const p = paths[(r + i) % paths.length];
    const x = await call(p.args);
    if (r >= WARMUP) runs[p.key].push(x);
  }
}
const load1 = loadavg()[0];

/** Ratio of `key`'s wall time to the baseline's, per round, then the median. */
const roundRatio = (key) => median(runs[key].map((x, i) => x.ms / runs.bare[i].ms));
const mean = (l) => l.reduce((a, b) => a + b, 0) / l.length;
const bareMs = median(runs.bare.map((x) => x.ms));
const rows = paths.map(({ key, label }) => {
  const l = runs[key];
  const ms = median(l.map((x) => x.ms));
  return `| ${label} | ${ms.toFixed(1)} | ${percentile(l.map((x) => x.ms), 90).toFixed(1)} | ${(ms / bareMs).toFixed(2)}× | ${roundRatio(key).toFixed(2)}× | ${mean(l.map((x) => x.cpu)).toFixed(0)} | ${median(l.map((x) => x.rss)).toFixed(1)} | ${Math.max(...l.map((x) => x.rss)).toFixed(1)} |`;
}).join('\n');

const execRatio = median(runs.exec.map((x) => x.ms)) / bareMs;
const execPeak = Math.max(...runs.exec.map((x) => x.rss));
const verdict = (ok) => (ok ? 'meets' : 'misses');
const p50 = (key) => median(runs[key].map((x) => x.ms));
const floor = `What stands between: the bare node:http client sending the same request (the floor of any CLI call
that talks to the daemon: Node's HTTP modules, the connection, the daemon's answer) takes ${(p50('http') / bareMs).toFixed(2)}× a bare
start; loom takes ${(p50('exec') - p50('http')).toFixed(1)} ms (wall p50) and ${(mean(runs.exec.map((x) => x.cpu)) - mean(runs.http.map((x) => x.cpu))).toFixed(0)} ms CPU more than that client. A V8 flag
on the command's line would add ${(p50('flags') - p50('exec')).toFixed(1)} ms wall and ${(mean(runs.flags.map((x) => x.cpu)) - mean(runs.exec.map((x) => x.cpu))).toFixed(0)} ms CPU (docs/cli.md, "No flag on the shebang").`;

// Where the time goes: one profiled call of each (CPU profile; the profiler itself slows both a little).
const profDir = mkdtempSync(join(tmpdir(), 'loom-cli-prof-'));
let profile = '';
try {
  for (const [name, args] of [['loom', paths[1].args], ['bare', paths[0].args]]) {
    const dir = join(profDir, name);
    await call(['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval', '100', ...args]);
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    profile += `\n#### ${name === 'loom' ? paths[1].label : paths[0].label}\n\n${summarise(join(dir, file), 12)}`;
  }
} finally {
  rmSync(profDir, { recursive: true, force: true });
}

await d.stop();
rmSync(d.dataDir, { recursive: true, force: true });

writeResult('cli', 'CLI call against a bare Node start', `
${ROUNDS} rounds after ${WARMUP} warm-up rounds; each round runs every path once, starting at another path each
round. Every loom child is started as \`node ${[...shebangFlags, "bin/loom.js"].join(" ")} …\` (the flags of bin/loom.js's own line;
\`node -e 0\` without them) under \`/usr/bin/time\`, which gives its peak RSS and CPU time (10 ms resolution, so
CPU is a mean); wall time is spawn to exit as the bench process sees it. One daemon (temp data folder, agent \`a\`).
NODE_EXTRA_CA_CERTS ${env.NODE_EXTRA_CA_CERTS ? 'set, as given' : 'unset for every child'}.
Load average (1 min) ${load0.toFixed(1)} at the start, ${load1.toFixed(1)} at the end, on 2 cores shared with other work.

| call | wall p50 ms | wall p90 ms | p50 / bare p50 | per-round ratio, median | CPU ms (mean) | peak RSS MiB (median) | peak RSS MiB (max) |
|---|---|---|---|---|---|---|---|
${rows}

Targets: \`loom --agent a main /help\` ≤ ${TARGET_RATIO}× a bare start: **${execRatio.toFixed(2)}×** (${verdict(execRatio <= TARGET_RATIO)});
peak RSS ≤ ${TARGET_RSS_MIB} MiB: **${execPeak.toFixed(1)} MiB** (${verdict(execPeak <= TARGET_RSS_MIB)}).

${floor}

### Where the CPU time goes (one call each under --cpu-prof)
${profile}`);
