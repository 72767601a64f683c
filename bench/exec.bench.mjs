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

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const skPort = await freePort();
const sk = await startSkeleton(skPort);
const d = await startDaemon();
await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench' }) });
const targets = {
  skeleton: () => load(`http://127.0.0.1:${skPort}/exec`, {}),
  loom: () => load(`${d.base}/exec`, { 'X-Agent-Id': 'bench' }),
};
// Warm-up runs discarded; then the two servers alternate, round by round, so that a slow or fast
// spell of this shared machine does not land on one of them only.
for (const run of Object.values(targets)) await run();
const runs = { skeleton: [], loom: [] };
for (let r = 0; r < ROUNDS; r++) for (const [k, run] of Object.entries(targets)) runs[k].push(await run());
sk.close();
await d.stop();
/** The rounds of one server folded into one row (mean req/s; worst p50/p99; summed failures). */
const fold = (rs) => ({
  requests: { average: rs.reduce((a, r) => a + r.requests.average, 0) / rs.length },
  latency: { p50: Math.max(...rs.map((r) => r.latency.p50)), p99: Math.max(...rs.map((r) => r.latency.p99)) },
  non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
  errors: rs.reduce((a, r) => a + r.errors, 0),
});
const base = fold(runs.skeleton);
const loom = fold(runs.loom);
const perRound = runs.skeleton.map((r, i) => `| ${i + 1} | ${Math.round(r.requests.average)} | ${Math.round(runs.loom[i].requests.average)} | ${(100 * runs.loom[i].requests.average / r.requests.average).toFixed(1)} % |`).join('\n');

const ratio = loom.requests.average / base.requests.average;
writeResult('exec', 'POST /exec (/help, 16 connections, 16 topics)', `
${ROUNDS} rounds of ${DURATION} s per server, the servers alternating, after a discarded warm-up run of each;
autocannon, HTTP/1.1 keep-alive. Rows: mean req/s over the rounds, the worst p50 and p99 of any round.

| round | skeleton req/s | Loom req/s | Loom / skeleton |
|---|---|---|---|
${perRound}


| server | req/s | p50 ms | p99 ms | non-2xx | errors |
|---|---|---|---|---|---|
${row('bare Express 5 + XState actor per topic', base)}
${row('Loom daemon', loom)}

Loom reaches **${(ratio * 100).toFixed(1)} %** of the skeleton's throughput (target ≥ 70 %).
`);
