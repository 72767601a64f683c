// bench/exec: POST /exec with /help on 16 connections over 16 topics (autocannon, keep-alive), Loom vs three
// baselines measured in the same run, each server in a process of its own:
//   bare      node:http alone, same SSE bytes: the floor of any Node server (Loom >= 40 % of it)
//   lean      Express 5 alone, no body parser middleware, same SSE bytes (the target: Loom >= 70 % of it)
//   skeleton  Express 5 + express.json() + one XState actor per topic with an invoked promise per command
//             (Loom >= 100 % of it)
// Then one sequential client (one request at a time, keep-alive): p50 latency (Loom target <= 0.5 ms).
// BENCH_COMPARE_ROOT=<built checkout> adds that build's daemon as one more server in the same rounds.
// BENCH_PROFILE=1 then loads a second daemon under --cpu-prof for one more run (the measured rounds stay
// unprofiled) and appends where its CPU time went.
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuMs, freePort, median, percentile, startDaemon, startServer, writeResult } from './common.mjs';
import { summarise } from './profile.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SEQ_N = Number(process.env.BENCH_SEQ ?? 3000);
const CONNECTIONS = 16;
const profileDir = process.env.BENCH_PROFILE ? mkdtempSync(join(tmpdir(), 'loom-prof-')) : null;

function load(url, headers) {
  let n = 0;
  return autocannon({
    url, connections: CONNECTIONS, duration: DURATION, method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    // One topic per connection: 16 topics, each with its own queue.
    setupClient: (client) => { const topic = `t${n++ % CONNECTIONS}`; client.setBody(JSON.stringify({ cmd: '/help', topic })); },
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
/** One POST /exec; resolves with the whole SSE text. */
function once(port, topic = 'seq') {
  const body = JSON.stringify({ cmd: '/help', topic });
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path: '/exec', method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'X-Agent-Id': 'bench', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** Sequential latencies (ms) of n requests. */
async function sequential(port, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await once(port);
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

const d = await startDaemon();
await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench' }) });
const sample = await once(d.port);
const content = JSON.parse(/event: content\ndata: (.*)\n/.exec(sample)[1]);
const contentFile = join(mkdtempSync(join(tmpdir(), 'loom-bench-')), 'help.txt');
writeFileSync(contentFile, content);
const BASELINES = ['bare', 'lean', 'skeleton'];
const servers = {};
const ports = {};
for (const name of BASELINES) {
  ports[name] = await freePort();
  servers[name] = await startServer('exec-baselines.mjs', [name, ports[name], contentFile]);
}
const compareRoot = process.env.BENCH_COMPARE_ROOT;
if (compareRoot) {
  servers.compare = await startDaemon({}, [], { root: compareRoot });
  ports.compare = servers.compare.port;
  await fetch(`${servers.compare.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench' }) });
}
ports.loom = d.port;
for (const name of Object.keys(servers)) {
  const t = await once(ports[name], 'seq');
  if (t.length !== sample.length) throw new Error(`${name} answers ${t.length} bytes, Loom ${sample.length}`);
}

const pids = { ...Object.fromEntries(Object.entries(servers).map(([k, s]) => [k, s.pid])), loom: d.pid };
/** One load run; also the server's CPU time per answered request (µs), which a busy machine disturbs less than req/s. */
async function measured(name, url, headers) {
  const before = cpuMs(pids[name]);
  const r = await load(url, headers);
  r.cpuUsPerRequest = ((cpuMs(pids[name]) - before) * 1000) / Math.max(1, r.requests.total);
  return r;
}
const targets = Object.fromEntries(Object.keys(pids).map((k) => [k, () => measured(k, `http://127.0.0.1:${ports[k]}/exec`, { 'X-Agent-Id': 'bench' })]));
// Warm-up runs discarded; then the servers alternate round by round, so a slow or fast spell of this
// shared machine does not land on one of them only.
for (const run of Object.values(targets)) await run();
const runs = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
const loads = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const [k, run] of Object.entries(targets)) runs[k].push(await run());
  loads.push(loadavg()[0]);
}
const seq = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
for (let block = 0; block < 5; block++) for (const k of Object.keys(seq)) seq[k].push(...(await sequential(ports[k], SEQ_N / 5)));
for (const s of Object.values(servers)) await s.stop();
await d.stop();
if (profileDir) {
  const p = await startDaemon({}, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
  await fetch(`${p.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench' }) });
  await load(`${p.base}/exec`, { 'X-Agent-Id': 'bench' });
  await p.stop();
}

const rps = (k) => runs[k].map((r) => r.requests.average);
const ratios = (k, base) => runs[k].map((r, i) => r.requests.average / runs[base][i].requests.average);
const pct = (x) => `${(100 * x).toFixed(1)} %`;
const perRound = runs.loom.map((r, i) => `| ${i + 1} | ${Math.round(runs.bare[i].requests.average)} | ${Math.round(runs.lean[i].requests.average)} | ${Math.round(runs.skeleton[i].requests.average)} | ${Math.round(r.requests.average)} | ${compareRoot ? `${Math.round(runs.compare[i].requests.average)} | ${pct(ratios('compare', 'bare')[i])} | ` : ''}${pct(ratios('loom', 'bare')[i])} | ${pct(ratios('loom', 'lean')[i])} | ${pct(ratios('loom', 'skeleton')[i])} | ${loads[i].toFixed(2)} |`).join('\n');
const cpu = (k) => median(runs[k].map((r) => r.cpuUsPerRequest));
const row = (name, k) => `| ${name} | ${Math.round(median(rps(k)))} | ${cpu(k).toFixed(0)} | ${median(runs[k].map((r) => r.latency.p50))} | ${median(runs[k].map((r) => r.latency.p99))} | ${runs[k].reduce((a, r) => a + r.non2xx + r.errors, 0)} | ${median(seq[k]).toFixed(3)} | ${percentile(seq[k], 99).toFixed(3)} |`;
const vsBare = median(ratios('loom', 'bare'));
const vsLean = median(ratios('loom', 'lean'));
const vsSkeleton = median(ratios('loom', 'skeleton'));
let profile = '';
if (profileDir) {
  const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
  profile = `\n### Where the daemon's CPU time goes (BENCH_PROFILE=1: a separate daemon under --cpu-prof, one ${DURATION} s load run after the rounds)\n\n${summarise(join(profileDir, file))}\n`;
}
writeResult('exec', 'POST /exec (/help, 16 connections, 16 topics)', `
${ROUNDS} rounds of ${DURATION} s per server, the servers alternating, after a discarded warm-up run of
each; every server in its own process; autocannon (this process), HTTP/1.1 keep-alive; all answer the
same bytes. Then one sequential client, ${SEQ_N} requests per server in 5 interleaved blocks.${compareRoot ? `
"compare" is the daemon of ${compareRoot}, measured in the same rounds.` : ''}

| round | bare node:http req/s | lean Express req/s | skeleton req/s | Loom req/s | ${compareRoot ? 'compare req/s | compare / bare | ' : ''}Loom / bare | Loom / lean | Loom / skeleton | load avg |
|---|---|---|---|---|${compareRoot ? '---|---|' : ''}---|---|---|---|
${perRound}

| server | req/s (median) | server CPU µs/request | p50 ms | p99 ms | non-2xx + errors | 1 client p50 ms | 1 client p99 ms |
|---|---|---|---|---|---|---|---|
${row('bare node:http', 'bare')}
${row('lean Express 5 (no body parser)', 'lean')}
${row('Express 5 + express.json + XState actor per topic (skeleton)', 'skeleton')}
${row('Loom daemon', 'loom')}${compareRoot ? `\n${row(`compare: ${compareRoot}`, 'compare')}` : ''}

Loom reaches **${pct(vsBare)}** of bare node:http (target ≥ 40 %), **${pct(vsLean)}** of lean Express (target ≥ 70 %) and **${pct(vsSkeleton)}** of the skeleton
(target ≥ 100 %), medians of the per-round ratios; one sequential client: p50 **${median(seq.loom).toFixed(3)} ms** (target ≤ 0.5 ms).
${compareRoot ? `The compare build reaches ${pct(median(ratios('compare', 'bare')))} of bare node:http in the same rounds.\n` : ''}Server CPU per request, the figure a shared machine disturbs least: Loom ${cpu('loom').toFixed(0)} µs, bare node:http ${cpu('bare').toFixed(0)} µs
(bare / Loom **${pct(cpu('bare') / cpu('loom'))}**), lean Express ${cpu('lean').toFixed(0)} µs
(lean / Loom **${pct(cpu('lean') / cpu('loom'))}**), skeleton ${cpu('skeleton').toFixed(0)} µs (skeleton / Loom **${pct(cpu('skeleton') / cpu('loom'))}**).
${profile}`);
