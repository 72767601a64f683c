// bench/fs: /fs GET and PUT of 4 KiB files on 16 connections, and GET of an 8 MiB file
// (MB/s), Loom daemon vs a bare node:http server (bench/fs-bare.mjs) on the same files, same run.
// Runs alternate bare / Loom / bare / Loom per scenario so load drift on a shared machine hits both.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, root, startDaemon, writeResult } from './common.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = 2;
const CONNECTIONS = 16;
const SMALL = Buffer.alloc(4096, 0x61);
const BIG = Buffer.alloc(8 * 1024 * 1024, 0x62);

/** The same files under `dir`: g/small.bin (4 KiB), big.bin (8 MiB), folder p/ for PUTs. */
function layout(dir) {
  mkdirSync(join(dir, 'g'), { recursive: true });
  mkdirSync(join(dir, 'p'), { recursive: true });
  writeFileSync(join(dir, 'g', 'small.bin'), SMALL);
  writeFileSync(join(dir, 'big.bin'), BIG);
}

/** One autocannon run; PUTs rotate over 16 files (p/f0.bin … p/f15.bin), overwritten again and again. */
function run(url, opts, duration) {
  let n = 0;
  const u = new URL(url);
  return autocannon({
    url, connections: CONNECTIONS, duration, ...opts,
    ...(opts.method === 'PUT' ? { body: SMALL, requests: [{ method: 'PUT', setupRequest: (req) => ({ ...req, path: `${u.pathname}${n++ % CONNECTIONS}.bin` }) }] } : {}),
  });
}

async function startBare(dir, mode) {
  const port = await freePort();
  const proc = spawn(process.execPath, [join(root, 'bench', 'fs-bare.mjs'), dir, String(port), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => proc.stdout.once('data', resolve));
  return { base: `http://127.0.0.1:${port}`, stop: () => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); }) };
}

/** Sum of measured runs of one target: requests, bytes, seconds, worst p99, failures. */
const total = () => ({ requests: 0, bytes: 0, seconds: 0, p50: [], p99: 0, bad: 0 });
function add(t, r) {
  t.requests += r.requests.total; t.bytes += r.throughput.total; t.seconds += r.duration;
  t.p50.push(r.latency.p50); t.p99 = Math.max(t.p99, r.latency.p99); t.bad += r.non2xx + r.errors;
}

const bareDir = mkdtempSync(join(tmpdir(), 'loom-bench-bare-'));
layout(bareDir);
const bare = await startBare(bareDir, 'inplace');
const bareAtomic = await startBare(bareDir, 'atomic');
const d = await startDaemon();
const reg = await (await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench', capability: { verbs: ['GET', 'PUT'], ttl_ms: 3_600_000 } }) })).json();
layout(reg.home);
const auth = { Authorization: `Bearer ${reg.capability.secret}` };

const scenarios = [
  { name: '4 KiB GET', unit: 'ops/s', path: '/g/small.bin', opts: {}, bares: [['bare', bare]] },
  { name: '4 KiB PUT', unit: 'ops/s', path: '/p/f', opts: { method: 'PUT' }, bares: [['bare (in place)', bare], ['bare (temp + rename)', bareAtomic]] },
  { name: '8 MiB GET', unit: 'MB/s', path: '/big.bin', opts: {}, bares: [['bare', bare]] },
];

const rows = [];
for (const s of scenarios) {
  const targets = [...s.bares.map(([label, b]) => ({ label, url: b.base + s.path, opts: s.opts })),
    { label: 'Loom', url: `${d.base}/fs${s.path}`, opts: { ...s.opts, headers: auth } }];
  for (const t of targets) { t.total = total(); await run(t.url, t.opts, 2); } // warm-up, discarded
  for (let round = 0; round < ROUNDS; round++) for (const t of targets) add(t.total, await run(t.url, t.opts, SECONDS));
  const value = (t) => (s.unit === 'MB/s' ? t.bytes / t.seconds / 1e6 : t.requests / t.seconds);
  const loom = targets.at(-1);
  for (const t of targets.slice(0, -1)) rows.push({ s, label: t.label, b: t.total, l: loom.total, bv: value(t.total), lv: value(loom.total) });
}
await d.stop();
await bare.stop();
await bareAtomic.stop();

const fmt = (v, unit) => (unit === 'MB/s' ? v.toFixed(0) : Math.round(v).toString());
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const table = rows.map(({ s, label, b, l, bv, lv }) =>
  `| ${s.name} | ${label} | ${s.unit} | ${fmt(bv, s.unit)} | ${fmt(lv, s.unit)} | **${((lv / bv) * 100).toFixed(1)} %** | ${med(b.p50)} / ${med(l.p50)} | ${b.p99} / ${l.p99} | ${b.bad} / ${l.bad} |`).join('\n');
writeResult('fs', '/fs plane (4 KiB GET/PUT ops/s, 8 MiB GET MB/s, 16 connections)', `
autocannon, HTTP/1.1 keep-alive, ${CONNECTIONS} connections. Per scenario: a 2 s warm-up of each server, then ${ROUNDS}
alternating rounds of ${SECONDS} s per server (bare, Loom, bare, Loom), summed. The bare server (bench/fs-bare.mjs)
is node:http streaming files with no checks; for PUT it runs twice: writing in place (truncate) and writing a temp
file then renaming it (the atomic write Loom must do so a reader never sees half a file). Loom serves the same
files through the full /fs path: host/origin guard, capability lookup by SHA-256, path rules, the fd-anchored
resolver (docs/fs-resolver.md), temp file + rename for PUT. All processes share the machine with the load
generator (and, on a shared CI box, with whatever else runs).

| scenario | baseline | unit | baseline | Loom | Loom / baseline | p50 ms base / Loom | p99 ms base / Loom | non-2xx + errors base / Loom |
|---|---|---|---|---|---|---|---|---|
${table}

Target: Loom ≥ 70 % of the bare server's ops/s. PUT: Loom must not let a reader see half a file (spec §4.1), so it
writes a temp file and renames it over the target; on ext4 a rename over an existing file starts a flush of the new
data while holding the folder's lock (auto_da_alloc), a cost the in-place baseline does not pay. The temp + rename
baseline pays it too and is the like-for-like comparison for the plane's own overhead.
`);
