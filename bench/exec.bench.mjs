// bench/exec (issue 2): POST /exec with /help on 16 connections over 16 topics, Loom vs a bare
// Express 5 + one-XState-actor-per-topic skeleton, same run, same machine.
import autocannon from 'autocannon';
import { freePort, startDaemon, writeResult } from './common.mjs';
import { startSkeleton } from './skeleton.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 16;

function load(url, headers) {
  let n = 0;
  return autocannon({
    url, connections: CONNECTIONS, duration: DURATION, method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    // One topic per connection: 16 topics, each with its own queue.
    setupClient: (client) => { const topic = `t${n++ % CONNECTIONS}`; client.setBody(JSON.stringify({ cmd: '/help', topic })); },
  });
}

const row = (name, r) => `| ${name} | ${Math.round(r.requests.average)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx} | ${r.errors} |`;

const skPort = await freePort();
const sk = await startSkeleton(skPort);
await load(`http://127.0.0.1:${skPort}/exec`, {}); // warm-up run discarded
const base = await load(`http://127.0.0.1:${skPort}/exec`, {});
sk.close();

const d = await startDaemon();
await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench' }) });
await load(`${d.base}/exec`, { 'X-Agent-Id': 'bench' });
const loom = await load(`${d.base}/exec`, { 'X-Agent-Id': 'bench' });
await d.stop();

const ratio = loom.requests.average / base.requests.average;
writeResult('exec', 'POST /exec (/help, 16 connections, 16 topics)', `
Each run lasts ${DURATION} s after a discarded warm-up run of the same length; autocannon, HTTP/1.1 keep-alive.

| server | req/s | p50 ms | p99 ms | non-2xx | errors |
|---|---|---|---|---|---|
${row('bare Express 5 + XState actor per topic', base)}
${row('Loom daemon', loom)}

Loom reaches **${(ratio * 100).toFixed(1)} %** of the skeleton's throughput (target ≥ 70 %).
`);
