// A/B of daemon builds on bench/exec's load (POST /exec /help, 16 connections over 16 topics, autocannon,
// keep-alive), with bare node:http in the same rounds: every build's daemon in a process of its own, the
// servers alternating round by round after a discarded warm-up run of each.
//   AB_ROOTS=<built checkout>,<built checkout>,...  the builds, in order (each against the one before it)
//   AB_ROUNDS (8), AB_SECONDS (3)
// Prints, and writes bench/results/exec-ab.node<line>.md: per build, median req/s, median server CPU
// µs/request (user + system from /proc: the figure a shared machine disturbs least), the median of the
// per-round req/s ratios to bare node:http, and the CPU ratio to the build before it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuMs, freePort, machine, median, nodeLine, startDaemon, startServer } from './common.mjs';

const ROOTS = (process.env.AB_ROOTS ?? '').split(',').filter(Boolean);
if (ROOTS.length === 0) throw new Error('AB_ROOTS=<built checkout>,... names the builds to compare');
const ROUNDS = Number(process.env.AB_ROUNDS ?? 8);
const SECONDS = Number(process.env.AB_SECONDS ?? 3);

function load(url, duration) {
  let n = 0;
  return autocannon({
    url, connections: 16, duration, method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Agent-Id': 'bench' },
    setupClient: (c) => { c.setBody(JSON.stringify({ cmd: '/help', topic: `t${n++ % 16}` })); },
  });
}

const servers = [];
for (const root of ROOTS) {
  const d = await startDaemon({}, [], { root });
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench' }) });
  servers.push({ name: root, pid: d.pid, url: `${d.base}/exec`, stop: d.stop });
}
// bare node:http with the content of the first build's /help answer (the same bytes as bench/exec's bare).
const sample = await (await fetch(servers[0].url, { method: 'POST', headers: { 'X-Agent-Id': 'bench' }, body: JSON.stringify({ cmd: '/help', topic: 'seq' }) })).text();
const contentFile = join(mkdtempSync(join(tmpdir(), 'loom-ab-')), 'help.txt');
writeFileSync(contentFile, JSON.parse(/event: content\ndata: (.*)\n/.exec(sample)[1]));
const barePort = await freePort();
const bare = await startServer('exec-baselines.mjs', ['bare', barePort, contentFile]);
servers.unshift({ name: 'bare node:http', pid: bare.pid, url: `http://127.0.0.1:${barePort}/exec`, stop: bare.stop });

async function measured(s, duration) {
  const before = cpuMs(s.pid);
  const r = await load(s.url, duration);
  if (r.non2xx || r.errors) throw new Error(`${s.name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, cpu: ((cpuMs(s.pid) - before) * 1000) / Math.max(1, r.requests.total) };
}
for (const s of servers) await measured(s, 2);
const runs = servers.map(() => []);
const loads = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const [i, s] of servers.entries()) runs[i].push(await measured(s, SECONDS));
  loads.push(loadavg()[0]);
}
for (const s of servers) await s.stop();

const cpu = (i) => median(runs[i].map((x) => x.cpu));
const share = (i) => median(runs[i].map((x, r) => x.rps / runs[0][r].rps));
const rows = servers.map((s, i) => `| ${s.name} | ${Math.round(median(runs[i].map((x) => x.rps)))} | ${cpu(i).toFixed(0)} | ${runs[i].map((x) => x.cpu.toFixed(0)).join(' ')} | ${i === 0 ? '' : `${(100 * share(i)).toFixed(1)} %`} | ${i < 2 ? '' : `${(cpu(i) / cpu(i - 1)).toFixed(2)}×`} |`).join('\n');
const text = `## POST /exec: A/B of daemon builds (/help, 16 connections, 16 topics) — Node ${nodeLine}

- Machine: ${machine()}
- Date: ${new Date().toISOString()}
- Command: \`AB_ROOTS=${ROOTS.join(',')} AB_ROUNDS=${ROUNDS} AB_SECONDS=${SECONDS} node bench/exec-ab.mjs\` (node ${process.version})

${ROUNDS} rounds of ${SECONDS} s per server, the servers alternating, after a discarded warm-up run of each; every
server in its own process; load average (1 min) over the rounds: ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}.

| server | req/s (median) | server CPU µs/request (median) | per round | req/s share of bare (median of rounds) | CPU vs the build before |
|---|---|---|---|---|---|
${rows}
`;
writeFileSync(join(dirname(fileURLToPath(import.meta.url)), 'results', `exec-ab.node${nodeLine}.md`), text);
console.log(text);
