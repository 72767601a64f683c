// Reliability figures: descriptors and RSS under 1,000 agents × (webhook + stream + 5 topics),
// mint latency against the number of stored capabilities, RSS after a 64 KiB webhook flood and a clear,
// RSS with 100,000 pending 1 KiB events. Targets: mint mean at 5,000 within 1.5× of at 100; flood + clear
// within 60 MB of the baseline; 100,000 pending ≤ 120 MB.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, writeFileSync, mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, startDaemon, writeResult } from './common.mjs';

const AGENTS = Number(process.env.RELIABILITY_AGENTS ?? 1000);
const MINT_ROUNDS = Number(process.env.RELIABILITY_MINT_ROUNDS ?? 6);
const MINTS_PER_ROUND = Number(process.env.RELIABILITY_MINTS ?? 150);
const FLOOD = Number(process.env.RELIABILITY_FLOOD ?? 1500);
const PENDING = Number(process.env.RELIABILITY_PENDING ?? 100000);
const MiB = 1024 * 1024;

/** Resident set size of a process in MiB. */
function rss(pid) {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
}

/** The descriptors of a process by kind. */
function fds(pid) {
  const out = { total: 0, sockets: 0, logs: 0, pipes: 0, other: 0 };
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target = '';
    try { target = readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { continue; }
    out.total++;
    if (target.startsWith('socket:')) out.sockets++;
    else if (target.endsWith('.jsonl')) out.logs++;
    else if (target.startsWith('pipe:')) out.pipes++;
    else out.other++;
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * RSS once the process has sat idle for SETTLE_S seconds: V8 keeps the young generation and freed
 * old-space pages of a burst committed until its memory reducer runs (~20 s of low allocation
 * here), so a reading right after a burst is transient; both readings are reported.
 */
const SETTLE_S = Number(process.env.RELIABILITY_SETTLE_S ?? 40);
async function settled(pid) {
  await sleep(SETTLE_S * 1000);
  return rss(pid);
}
const post = (url, body, headers = {}) => fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

/** Run `fn(i)` for i < n with `width` in flight. */
async function pool(n, width, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => { while (next < n) await fn(next++); }));
}

async function exec(base, agent, topic, cmd) {
  const res = await post(`${base}/exec`, { cmd, topic }, { 'X-Agent-Id': agent, Accept: 'text/event-stream' });
  const text = await res.text();
  if (res.status !== 200 || text.includes('"ok":false')) throw new Error(`${agent} ${topic} ${cmd}: ${res.status} ${text.slice(0, 200)}`);
}

/** Open an event stream and keep it open; resolves once `ready` arrived. */
function openStream(port, agent) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/events/stream', agent: false, headers: { 'X-Agent-Id': agent, Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`stream ${agent}: ${res.statusCode}`)); return; }
      res.on('data', (c) => { if (String(c).includes('event: ready')) resolve(req); });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Part A: 1,000 agents, each with a webhook event, an open stream and five topics. */
async function agentsPart() {
  const d = await startDaemon();
  await sleep(500);
  const base = { fds: fds(d.pid), rss: rss(d.pid) };
  const streams = [];
  const t0 = Date.now();
  await pool(AGENTS, 10, async (i) => {
    const id = `ag${i}`;
    const reg = await (await post(`${d.base}/agents`, { agent_id: id, webhook: true })).json();
    const hook = await fetch(reg.webhook_url, { method: 'POST', body: `hello ${id}` });
    if (hook.status !== 202) throw new Error(`webhook ${id}: ${hook.status}`);
    for (let t = 1; t <= 5; t++) await exec(d.base, id, `t${t}`, '/info');
    streams.push(await openStream(d.port, id));
  });
  const seconds = (Date.now() - t0) / 1000;
  await sleep(1000);
  const loaded = { fds: fds(d.pid), rss: rss(d.pid) };
  const health = await (await fetch(`${d.base}/health`)).json();
  for (const s of streams) s.destroy();
  await d.stop();
  return { base, loaded, health, seconds };
}

/** A data directory with agent `bench` and `n` live capabilities already stored. */
function capabilityData(n) {
  const dataDir = mkdtempSync(join(tmpdir(), 'loom-bench-caps-'));
  const home = mkdtempSync(join(tmpdir(), 'loom-bench-home-'));
  writeFileSync(join(dataDir, 'agents.json'), JSON.stringify({ version: 1, agents: { bench: { id: 'bench', home, allowedPaths: [], createdAt: new Date().toISOString() } } }), { mode: 0o600 });
  const now = Date.now();
  const capabilities = Array.from({ length: n }, (_, i) => ({
    token_id: `cap_${randomBytes(12).toString('base64url')}`, agent_id: 'bench', path_prefix: `p${i}`, verbs: ['GET'], ttl_ms: 86_400_000,
    single_use: false, state: 'live', created_at: new Date(now).toISOString(), expires_at: new Date(now + 86_400_000).toISOString(),
    used_at: null, revoked_at: null, secret_sha256: randomBytes(32).toString('hex'),
  }));
  writeFileSync(join(dataDir, 'capabilities.json'), JSON.stringify({ version: 1, capabilities }), { mode: 0o600 });
  return dataDir;
}

/** Part B: mint latency at 100 and at 5,000 stored capabilities, mints interleaved one by one. */
async function mintPart() {
  const levels = [100, 5000];
  const times = Object.fromEntries(levels.map((l) => [l, []]));
  const roundMeans = Object.fromEntries(levels.map((l) => [l, []]));
  const spec = JSON.stringify({ agent_id: 'bench', path_prefix: 'x', verbs: ['GET'], ttl_ms: 3_600_000 });
  for (let round = 0; round < MINT_ROUNDS; round++) {
    const daemons = [];
    for (const l of levels) daemons.push(await startDaemon({ SVC_DATA_DIR: capabilityData(l) }));
    const got = levels.map(() => []);
    for (let i = 0; i < MINTS_PER_ROUND; i++) {
      for (let k = 0; k < levels.length; k++) {
        const t = process.hrtime.bigint();
        const res = await fetch(`${daemons[k].base}/capabilities`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: spec });
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`mint ${res.status}`);
        got[k].push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }
    levels.forEach((l, k) => { times[l].push(...got[k]); roundMeans[l].push(got[k].reduce((a, b) => a + b, 0) / got[k].length); });
    for (const d of daemons) await d.stop();
  }
  return { levels, times, roundMeans };
}

/** Part C: 1,500 × 64 KiB webhook events, then /events.clear --all; RSS before, after, after the clear. */
async function floodPart() {
  const rounds = [];
  for (let round = 0; round < 3; round++) {
    const d = await startDaemon();
    const reg = await (await post(`${d.base}/agents`, { agent_id: 'flood', webhook: true })).json();
    await exec(d.base, 'flood', 'event', '/events');
    await sleep(1000);
    const base = rss(d.pid);
    const body = 'x'.repeat(64 * 1024 - 10);
    let peak = base;
    await pool(FLOOD, 8, async (i) => {
      const r = await fetch(reg.webhook_url, { method: 'POST', body: `${String(i).padStart(9, '0')}${body}`.slice(0, 65536) });
      if (r.status !== 202) throw new Error(`flood ${r.status}`);
      if (i % 100 === 0) peak = Math.max(peak, rss(d.pid));
    });
    await sleep(1000);
    const after = rss(d.pid);
    await exec(d.base, 'flood', 'event', '/events.clear --all');
    await sleep(3000);
    const cleared = rss(d.pid);
    const clearedSettled = await settled(d.pid);
    rounds.push({ base, peak: Math.max(peak, after), after, cleared, clearedSettled });
    await d.stop();
  }
  return rounds;
}

/** Part D: 100,000 pending 1 KiB events, RSS while running and after a restart that reloads them. */
async function pendingPart() {
  const dataDir = mkdtempSync(join(tmpdir(), 'loom-bench-pending-'));
  let d = await startDaemon({ SVC_DATA_DIR: dataDir });
  const reg = await (await post(`${d.base}/agents`, { agent_id: 'many', webhook: true })).json();
  await sleep(500);
  const base = rss(d.pid);
  const body = 'y'.repeat(1024 - 10);
  const t0 = Date.now();
  let peak = base;
  await pool(PENDING, 32, async (i) => {
    const r = await fetch(reg.webhook_url, { method: 'POST', body: `${String(i).padStart(9, '0')}${body}` });
    if (r.status !== 202) throw new Error(`ingest ${r.status}`);
    if (i % 2000 === 0) peak = Math.max(peak, rss(d.pid));
  });
  const seconds = (Date.now() - t0) / 1000;
  await exec(d.base, 'many', 'event', '/events');
  await sleep(2000);
  const running = rss(d.pid);
  const runningSettled = await settled(d.pid);
  await d.stop();
  const t1 = Date.now();
  d = await startDaemon({ SVC_DATA_DIR: dataDir });
  const loadSeconds = (Date.now() - t1) / 1000;
  await exec(d.base, 'many', 'event', '/events');
  await sleep(2000);
  const restarted = rss(d.pid);
  const restartedSettled = await settled(d.pid);
  await d.stop();
  return { base, peak: Math.max(peak, running), running, runningSettled, restarted, restartedSettled, seconds, loadSeconds };
}

const f1 = (x) => x.toFixed(1);
const f2 = (x) => x.toFixed(2);
const mean = (l) => l.reduce((a, b) => a + b, 0) / l.length;

const a = await agentsPart();
console.log('agents', JSON.stringify(a));
const b = await mintPart();
console.log('mint', JSON.stringify(b.roundMeans));
const c = await floodPart();
console.log('flood', JSON.stringify(c));
const dd = await pendingPart();
console.log('pending', JSON.stringify(dd));

const [lo, hi] = b.levels;
const ratioMeans = mean(b.times[hi]) / mean(b.times[lo]);
const ratioRoundMedians = median(b.roundMeans[hi]) / median(b.roundMeans[lo]);
const floodDelta = median(c.map((r) => r.cleared - r.base));
const floodSettledDelta = median(c.map((r) => r.clearedSettled - r.base));
const load = loadavg().map((x) => x.toFixed(1)).join(', ');

writeResult('reliability', 'Reliability: descriptors, memory, mint cost (issue 12)', `
Each part runs the built daemon on a fresh temp data directory. Figures from /proc/<pid>/status (VmRSS)
and /proc/<pid>/fd. Load average when the bench ended: ${load} (2 shared cores).

### ${AGENTS} agents × (webhook + open event stream + 5 topics)

Each agent: registered with a webhook, one 202'd event, \`/info\` on five topics (five sessions), one open
\`GET /events/stream\`. Set-up took ${f1(a.seconds)} s (10 agents at a time).

| | descriptors | of which sockets | inbox logs | pipes | other | RSS MiB |
|---|---|---|---|---|---|---|
| after start | ${a.base.fds.total} | ${a.base.fds.sockets} | ${a.base.fds.logs} | ${a.base.fds.pipes} | ${a.base.fds.other} | ${f1(a.base.rss)} |
| ${AGENTS} agents loaded | ${a.loaded.fds.total} | ${a.loaded.fds.sockets} | ${a.loaded.fds.logs} | ${a.loaded.fds.pipes} | ${a.loaded.fds.other} | ${f1(a.loaded.rss)} |

\`/health\`: ${JSON.stringify(a.health)}. The sockets are the ${AGENTS} open streams (one each, inherent);
inbox logs hold at most the pool's bound (an eighth of the descriptor limit, 8–64) whatever the number
of agents (before issue 12: one per agent for ever, so ${AGENTS} here). Memory per loaded agent (RSS
growth / agents): ${f1(((a.loaded.rss - a.base.rss) * 1024) / AGENTS)} KiB.

### Mint latency against stored capabilities

\`POST /capabilities\` (201 sent after the journal line is fdatasync'ed), one client, sequential; two daemons
per round, one holding ${lo} and one ${hi} live capabilities (written to capabilities.json before start),
mints alternating between them call by call; ${MINT_ROUNDS} rounds × ${MINTS_PER_ROUND} mints each, fresh daemons per round. ms:

| stored | mean | p50 | median of round means | round means |
|---|---|---|---|---|
| ${lo} | ${f2(mean(b.times[lo]))} | ${f2(median(b.times[lo]))} | ${f2(median(b.roundMeans[lo]))} | ${b.roundMeans[lo].map(f2).join(', ')} |
| ${hi} | ${f2(mean(b.times[hi]))} | ${f2(median(b.times[hi]))} | ${f2(median(b.roundMeans[hi]))} | ${b.roundMeans[hi].map(f2).join(', ')} |

Ratio ${hi} / ${lo}: **${f2(ratioMeans)}×** (means of all mints), ${f2(ratioRoundMedians)}× (medians of round means).
Target ≤ 1.5×: **${ratioMeans <= 1.5 ? 'meets' : 'misses'}**. (Before issue 12 every mint rewrote the whole
capabilities.json: 4.7 ms at 1,000 live tokens, 24.9 ms at 6,000, as the issue measured.)

### Webhook flood: ${FLOOD} × 64 KiB events, then \`/events.clear --all\`

Three rounds, fresh daemon each (8 connections). RSS MiB:

| round | baseline | peak | after the flood | 3 s after the clear | − baseline | ${SETTLE_S} s later | − baseline |
|---|---|---|---|---|---|---|---|
${c.map((r, i) => `| ${i + 1} | ${f1(r.base)} | ${f1(r.peak)} | ${f1(r.after)} | ${f1(r.cleared)} | ${f1(r.cleared - r.base)} | ${f1(r.clearedSettled)} | ${f1(r.clearedSettled - r.base)} |`).join('\n')}

Median growth 3 s after the clear: **${f1(floodDelta)} MB**, ${SETTLE_S} s later (idle, V8's memory reducer has run):
**${f1(floodSettledDelta)} MB**; target ≤ 60 MB: **${floodDelta <= 60 ? 'meets' : floodSettledDelta <= 60 ? 'meets once settled' : 'misses'}**
(before issue 12: 80 → 342 MB after 3,000 events, and it stayed there after the clear). Texts stay in the
log; memory holds an index and a 4 MiB cache of recent texts.

### ${PENDING.toLocaleString('en-US')} pending 1 KiB events

Posted through the webhook (32 connections, ${f1(dd.seconds)} s, ${Math.round(PENDING / dd.seconds)} events/s), then the daemon was
restarted and rebuilt its index from the log (${f1(dd.loadSeconds)} s to the ready line).

| | RSS MiB |
|---|---|
| baseline | ${f1(dd.base)} |
| peak during ingest | ${f1(dd.peak)} |
| ${PENDING.toLocaleString('en-US')} pending, running, 2 s after the ingest | ${f1(dd.running)} |
| the same, ${SETTLE_S} s later (idle) | ${f1(dd.runningSettled)} |
| after a restart with ${PENDING.toLocaleString('en-US')} pending (2 s after the first \`/events\`) | ${f1(dd.restarted)} |
| the same, ${SETTLE_S} s later | ${f1(dd.restartedSettled)} |

Target ≤ 120 MB: **${Math.max(dd.running, dd.restarted) <= 120 ? 'meets' : Math.max(dd.runningSettled, dd.restartedSettled) <= 120 ? 'meets once settled (not 2 s after the ingest burst)' : 'misses'}** (running and restarted).
The index is columnar (src/stores/eventIndex.ts: ~48 bytes a row); what stays above the restarted
figure right after the ingest is the burst's young generation and freed heap pages, which V8 keeps
committed until its memory reducer runs.
`);
