// bench/fs (issue 3): /fs GET and PUT of 4 KiB files on 16 connections, and GET of an 8 MiB file
// (MB/s), Loom daemon vs a bare node:http server (bench/fs-bare.mjs) on the same files, same run.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, root, startDaemon, writeResult } from './common.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 16;
const SMALL = Buffer.alloc(4096, 0x61);
const BIG = Buffer.alloc(8 * 1024 * 1024, 0x62);

/** Lay out the same files under `dir`: g/small.bin (4 KiB), big.bin (8 MiB), folder p/ for PUTs. */
function layout(dir) {
  mkdirSync(join(dir, 'g'), { recursive: true });
  mkdirSync(join(dir, 'p'), { recursive: true });
  writeFileSync(join(dir, 'g', 'small.bin'), SMALL);
  writeFileSync(join(dir, 'big.bin'), BIG);
}

function load(url, opts = {}) {
  let n = 0;
  return autocannon({
    url, connections: CONNECTIONS, duration: DURATION, ...opts,
    // PUTs spread over 16 files (one per connection) so writers do not all rename onto one name.
    ...(opts.method === 'PUT' ? { setupClient: (c) => { const i = n++ % CONNECTIONS; c.setRequest({ method: 'PUT', path: `${new URL(url).pathname}${i}.bin${new URL(url).search}`, body: SMALL, headers: opts.headers }); } } : {}),
  });
}

/** Warm up, then measure; returns the measured run. */
async function measure(url, opts) {
  await autocannon({ url, connections: CONNECTIONS, duration: 2, ...opts });
  return load(url, opts);
}

async function startBare(dir) {
  const port = await freePort();
  const proc = spawn(process.execPath, [join(root, 'bench', 'fs-bare.mjs'), dir, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => proc.stdout.once('data', resolve));
  return { base: `http://127.0.0.1:${port}`, stop: () => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); }) };
}

const scenarios = [
  { name: '4 KiB GET', unit: 'ops/s', path: '/g/small.bin', opts: {} },
  { name: '4 KiB PUT', unit: 'ops/s', path: '/p/f', opts: { method: 'PUT', body: SMALL } },
  { name: '8 MiB GET', unit: 'MB/s', path: '/big.bin', opts: {} },
];

const bareDir = mkdtempSync(join(tmpdir(), 'loom-bench-bare-'));
layout(bareDir);
const bare = await startBare(bareDir);
const d = await startDaemon();
const reg = await (await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench', capability: { verbs: ['GET', 'PUT'], ttl_ms: 3_600_000 } }) })).json();
layout(reg.home);
const auth = { Authorization: `Bearer ${reg.capability.secret}` };

const rows = [];
for (const s of scenarios) {
  const b = await measure(bare.base + s.path, s.opts);
  const l = await measure(`${d.base}/fs${s.path}`, { ...s.opts, headers: auth });
  const value = (r) => (s.unit === 'MB/s' ? r.throughput.average / 1e6 : r.requests.average);
  rows.push({ s, b, l, bv: value(b), lv: value(l) });
}
await d.stop();
await bare.stop();

const fmt = (v, unit) => (unit === 'MB/s' ? v.toFixed(0) : Math.round(v).toString());
const table = rows.map(({ s, b, l, bv, lv }) =>
  `| ${s.name} | ${s.unit} | ${fmt(bv, s.unit)} | ${fmt(lv, s.unit)} | **${((lv / bv) * 100).toFixed(1)} %** | ${b.latency.p50} / ${l.latency.p50} | ${b.latency.p99} / ${l.latency.p99} | ${b.non2xx + b.errors} / ${l.non2xx + l.errors} |`).join('\n');
writeResult('fs', '/fs plane (4 KiB GET/PUT ops/s, 8 MiB GET MB/s, 16 connections)', `
Each run lasts ${DURATION} s after a 2 s warm-up; autocannon, HTTP/1.1 keep-alive, ${CONNECTIONS} connections. The bare
server (bench/fs-bare.mjs) is node:http streaming files with no checks; Loom serves the same files through the full
/fs path (host/origin guard, capability lookup by SHA-256, path rules, the fd-anchored resolver, temp file + rename
for PUT). Both run as separate processes on the same machine as the load generator.

| scenario | unit | bare | Loom | Loom / bare | p50 ms bare / Loom | p99 ms bare / Loom | non-2xx + errors bare / Loom |
|---|---|---|---|---|---|---|---|
${table}

Target: Loom ≥ 70 % of the bare server's ops/s.
`);
