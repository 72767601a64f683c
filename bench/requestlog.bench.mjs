// bench/requestlog: what the request log (behaviour.md §2.13) costs. The same daemon composed twice,
// each in a process of its own, with the log on and off; POST /exec /help on 16 connections over 16
// topics (autocannon, keep-alive), the two alternating round by round so drift on this shared machine
// hits both alike; then one sequential client. Reported: median throughput with the log as a
// percentage of without it, and the p50 latency of each.
import { mkdtempSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort, median, percentile, startServer, writeResult } from './common.mjs';
import { cpus } from 'node:os';

const cpusCount = () => cpus().length;

const DURATION = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SEQ_N = Number(process.env.BENCH_SEQ ?? 2000);

const loadStart = loadavg()[0];
const servers = {};
const dirs = {};
for (const mode of ['on', 'off']) {
  const port = await freePort();
  dirs[mode] = mkdtempSync(join(tmpdir(), `loom-bench-log-${mode}-`));
  servers[mode] = { port, proc: await startServer('requestlog-server.mjs', [mode, port, dirs[mode]]) };
  await fetch(`http://127.0.0.1:${port}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench' }) });
}

function load(port) {
  let n = 0;
  return autocannon({
    url: `http://127.0.0.1:${port}/exec`, connections: 16, duration: DURATION, method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Agent-Id': 'bench' },
    setupClient: (client) => { client.setBody(JSON.stringify({ cmd: '/help', topic: `t${n++ % 16}` })); },
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function once(port) {
  const body = JSON.stringify({ cmd: '/help', topic: 'seq' });
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path: '/exec', method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'X-Agent-Id': 'bench', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', resolve);
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

const rps = { on: [], off: [] };
for (const mode of ['on', 'off']) await load(servers[mode].port); // warm-up, discarded
for (let i = 0; i < ROUNDS; i++) {
  for (const mode of i % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
    const r = await load(servers[mode].port);
    rps[mode].push(r.requests.average);
    console.log(`round ${i + 1} ${mode}: ${Math.round(r.requests.average)} req/s`);
  }
}
const lat = { on: [], off: [] };
for (let i = 0; i < SEQ_N; i++) {
  for (const mode of i % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
    const t = process.hrtime.bigint();
    await once(servers[mode].port);
    lat[mode].push(Number(process.hrtime.bigint() - t) / 1e6);
  }
}
const lines = readFileSync(join(dirs.on, 'logs', 'requests.log'), 'utf8').split('\n').filter(Boolean).length;
for (const mode of ['on', 'off']) await servers[mode].proc.stop();

// Per entry, in this process: the log file's write (formatting by pino and queueing; the batched append
// happens after the timed loop) against pino formatting into a no-op destination, interleaved.
const { RequestLogFile } = await import('../dist/effects/requestLogFile.js');
const { pino } = await import('pino');
const entry = { time: new Date().toISOString(), method: 'POST', path: '/exec', status: 200, duration_ms: 3, agent: 'bench', topic: 't1', command: '/help', request_id: null };
const file = new RequestLogFile(mkdtempSync(join(tmpdir(), 'loom-bench-log-')));
const bare = pino({ base: null, timestamp: pino.stdTimeFunctions.isoTime }, { write() {} });
const per = { file: [], pino: [], flush: [] };
for (let round = 0; round < 31; round++) {
  let t = process.hrtime.bigint();
  for (let i = 0; i < 2000; i++) file.write(entry);
  per.file.push(Number(process.hrtime.bigint() - t) / 2e6);
  t = process.hrtime.bigint();
  await new Promise((r) => setImmediate(r));
  per.flush.push(Number(process.hrtime.bigint() - t) / 2e6);
  t = process.hrtime.bigint();
  for (let i = 0; i < 2000; i++) bare.info(entry);
  per.pino.push(Number(process.hrtime.bigint() - t) / 2e6);
}
await file.close();

const ratio = (100 * median(rps.on)) / median(rps.off);
writeResult('requestlog', 'Request log overhead (POST /exec /help)', `
Load average (1 min) at start ${loadStart.toFixed(1)}, at end ${loadavg()[0].toFixed(1)} on ${cpusCount()} cores: above the core count,
other processes share the CPU and single rounds swing; compare the medians of alternating rounds only.

| Daemon | median req/s (${ROUNDS} rounds × ${DURATION} s, 16 connections) | sequential p50 (ms, ${SEQ_N} requests) | p99 (ms) |
|---|---|---|---|
| request log on | ${Math.round(median(rps.on))} | ${percentile(lat.on, 50).toFixed(3)} | ${percentile(lat.on, 99).toFixed(3)} |
| request log off | ${Math.round(median(rps.off))} | ${percentile(lat.off, 50).toFixed(3)} | ${percentile(lat.off, 99).toFixed(3)} |

With the log: **${ratio.toFixed(1)} %** of the throughput without it (rounds alternate; per round on: ${rps.on.map(Math.round).join(', ')}; off: ${rps.off.map(Math.round).join(', ')}).
The log file got ${lines} lines (one per request served by the "on" daemon).

Per entry, in-process (median of 31 rounds × 2000 entries): log file write ${median(per.file).toFixed(2)} µs (pino formatting + queueing),
then its batched append (one write per round, timed up to the next turn of the loop) ${median(per.flush).toFixed(2)} µs per entry; pino formatting into a no-op destination alone ${median(per.pino).toFixed(2)} µs.
`);
