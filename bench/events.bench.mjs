// Webhook ingest rate (events/s, p50/p99) on 8 connections with 10, 10 000 and 100 000 pending events,
// and the delay from the 202 to the event's arrival on an open GET /events/stream (issue 4).
// Each measurement starts a fresh daemon whose inbox log was pre-filled on disk (the documented
// events.jsonl format, behaviour.md §9.8), so the daemon rebuilds the index at start-up like after a restart.
import autocannon from 'autocannon';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monotonicFactory } from 'ulid';
import { startDaemon, writeResult } from './common.mjs';

const LEVELS = [10, 10000, 100000];
const ROUNDS = Number(process.env.EVENTS_BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.EVENTS_BENCH_SECONDS ?? 8);
const CONNECTIONS = 8;
const BODY = 'CI: build #1234 of main failed at step "test" — see http://127.0.0.1:8080/builds/1234 for the log.';

/** Register the agent with a webhook on a throw-away daemon run, so agents.json holds the token. */
async function prepare(pending) {
  const dataDir = mkdtempSync(join(tmpdir(), 'loom-bench-events-'));
  const d = await startDaemon({ SVC_DATA_DIR: dataDir });
  const reg = await (await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench', webhook: true }) })).json();
  await d.stop();
  const token = reg.webhook_url.slice(reg.webhook_url.lastIndexOf('/') + 1);
  const next = monotonicFactory();
  const t0 = Date.now() - pending * 10;
  const lines = [];
  for (let i = 0; i < pending; i++) {
    const at = t0 + i * 10;
    const event = { id: `evt_${next(at)}`, agentId: 'bench', receivedAt: new Date(at).toISOString(), source: 'local-webhook', text: `${BODY} (${i})`, status: 'pending', ackedAt: null };
    lines.push(JSON.stringify({ op: 'add', event }));
  }
  const state = join(dataDir, 'agents', 'bench', 'state');
  mkdirSync(state, { recursive: true, mode: 0o700 });
  writeFileSync(join(state, 'events.jsonl'), lines.length ? lines.join('\n') + '\n' : '', { mode: 0o600 });
  return { dataDir, token };
}

async function pendingCount(base) {
  const res = await fetch(`${base}/exec`, { method: 'POST', headers: { 'X-Agent-Id': 'bench', 'Content-Type': 'application/json' }, body: JSON.stringify({ cmd: '/events', topic: 'event' }) });
  const text = await res.text();
  const m = /Event inbox of bench — (\d+) pending/.exec(text);
  return m ? Number(m[1]) : NaN;
}

async function ingest(pending) {
  const { dataDir, token } = await prepare(pending);
  const started = Date.now();
  const d = await startDaemon({ SVC_DATA_DIR: dataDir });
  const startMs = Date.now() - started;
  const before = await pendingCount(d.base);
  const url = `${d.base}/webhook/${token}`;
  const opts = { url, method: 'POST', body: BODY, headers: { 'Content-Type': 'text/plain' }, connections: CONNECTIONS };
  await autocannon({ ...opts, duration: 1 }); // warm-up, not counted
  const r = await autocannon({ ...opts, duration: SECONDS });
  const after = await pendingCount(d.base);
  await d.stop();
  const ok = r['2xx'];
  return { pending, before, after, startMs, rate: ok / (r.duration || SECONDS), p50: r.latency.p50, p99: r.latency.p99, ok, bad: r.non2xx + r.errors + r.timeouts };
}

/** 202 → stream: post sequentially with one stream open; match arrivals by event id. */
async function streamDelay(n = 300) {
  const { dataDir, token } = await prepare(10);
  const d = await startDaemon({ SVC_DATA_DIR: dataDir });
  const ac = new AbortController();
  const res = await fetch(`${d.base}/events/stream`, { headers: { 'X-Agent-Id': 'bench', Accept: 'text/event-stream' }, signal: ac.signal });
  const arrivals = new Map();
  let ready;
  const readyP = new Promise((r) => { ready = r; });
  const reading = (async () => {
    const dec = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body) {
        const now = performance.now();
        buf += dec.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (block.startsWith('event: ready')) ready();
          if (block.startsWith('event: event')) arrivals.set(JSON.parse(block.slice(block.indexOf('data: ') + 6)).id, now);
        }
      }
    } catch { /* aborted at the end */ }
  })();
  await readyP;
  const after202 = [];
  const fromSend = [];
  for (let k = 0; k < n; k++) {
    const sent = performance.now();
    const r = await fetch(`${d.base}/webhook/${token}`, { method: 'POST', body: `${BODY} [${k}]` });
    const got = performance.now();
    const { event_id } = await r.json();
    while (!arrivals.has(event_id)) await new Promise((x) => setTimeout(x, 0));
    const at = arrivals.get(event_id);
    after202.push(at - got);
    fromSend.push(at - sent);
  }
  ac.abort();
  await reading;
  await d.stop();
  return { n, after202, fromSend };
}

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const median = (xs) => pct(xs, 50);
const f1 = (x) => x.toFixed(1);
const f2 = (x) => x.toFixed(2);

const runs = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const level of LEVELS) {
    const r = await ingest(level);
    console.log(`round ${round + 1} pending ${level}: ${Math.round(r.rate)} events/s, p50 ${r.p50} ms, p99 ${r.p99} ms (${r.ok} ok, ${r.bad} not ok, start ${r.startMs} ms, inbox ${r.before} → ${r.after})`);
    runs.push(r);
  }
}
const delay = await streamDelay();

const rows = LEVELS.map((level) => {
  const rs = runs.filter((r) => r.pending === level);
  return { level, rate: median(rs.map((r) => r.rate)), rates: rs.map((r) => Math.round(r.rate)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)), bad: rs.reduce((a, r) => a + r.bad, 0), startMs: median(rs.map((r) => r.startMs)), ok: rs.every((r) => r.after === r.before + r.ok + (r.after - r.before - r.ok)) };
});
const base = rows[0].rate;
const table = [
  '| pending at start | events/s (median of rounds) | each round | p50 ms | p99 ms | rate vs 10 pending | not 2xx | daemon start |',
  '|---:|---:|---|---:|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.level.toLocaleString('en')} | ${Math.round(r.rate)} | ${r.rates.join(', ')} | ${r.p50} | ${r.p99} | ${f2(r.rate / base)}× | ${r.bad} | ${r.startMs} ms |`),
].join('\n');
const worst = Math.max(...rows.map((r) => base / r.rate));
const body = `
Webhook ingest: \`POST /webhook/<token>\` with a ${Buffer.byteLength(BODY)}-byte text, ${CONNECTIONS} connections (autocannon),
${SECONDS} s per run after a 1 s warm-up, ${ROUNDS} rounds over the three inbox sizes (fresh daemon per run, inbox log pre-filled on disk
and loaded at start-up). Every 202 is sent after the append was fdatasync'ed (group commit: concurrent appends share one sync).
The inbox grows during a run by the events it ingests (the "pending at start" column is the size before the run).

${table}

Target: ≥ 1500 events/s, and the rate at 100 000 pending within 1.2× of the rate at 10 pending.
Slowest level vs 10 pending: ${f2(worst)}× (${worst <= 1.2 ? 'within' : 'outside'} 1.2×). Median rate at 10 pending: ${Math.round(base)} events/s (${base >= 1500 ? 'meets' : 'below'} 1500).

202 → stream delay (${delay.n} webhooks posted one at a time, one stream open, arrival matched by event id):

| measure | p50 ms | p99 ms | max ms |
|---|---:|---:|---:|
| stream arrival − 202 received (negative: the stream was first) | ${f2(pct(delay.after202, 50))} | ${f2(pct(delay.after202, 99))} | ${f2(Math.max(...delay.after202))} |
| stream arrival − request sent | ${f2(pct(delay.fromSend, 50))} | ${f2(pct(delay.fromSend, 99))} | ${f2(Math.max(...delay.fromSend))} |

The daemon writes the \`event\` to every open stream in the same tick as the 202, right after the fdatasync.
`;
writeResult('events', 'Events: webhook ingest and stream delivery', body);
void f1;
