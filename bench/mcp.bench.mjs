// bench/mcp: tools/call `/help` through POST /mcp of the daemon, beside a bare stateless SDK server
// with one trivial tool (bench/mcp-bare.mjs), same run, same load. Target: Loom ≥ 90 % of bare req/s.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { root, startDaemon, writeResult } from './common.mjs';

const CONNECTIONS = 10;
const DURATION_S = 5;
const ROUNDS = 6;
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Agent-Id': 'bench' };

function startBare(env = {}) {
  const proc = spawn(process.execPath, [join(root, 'bench', 'mcp-bare.mjs')], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    proc.stdout.on('data', (c) => {
      const m = /port (\d+)/.exec(String(c));
      if (m) resolve({ base: `http://127.0.0.1:${m[1]}`, pid: proc.pid, stop: () => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); }) });
    });
    proc.once('exit', (code) => reject(new Error(`bare server exited ${code}`)));
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** One autocannon run; each connection uses its own topic, so no Loom call is BUSY. */
async function load({ base, pid }, tool, seconds) {
  const cpu0 = cpuSeconds(pid);
  let conn = 0;
  let toolErrors = 0;
  const result = await autocannon({
    url: `${base}/mcp`,
    connections: CONNECTIONS,
    duration: seconds,
    setupClient: (client) => {
      const topic = `t${conn++}`;
      client.setRequests([{
        method: 'POST', path: '/mcp', headers: HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: { topic, cmd: '/help' } } }),
        onResponse: (status, body) => { if (status !== 200 || !body.includes('"isError":false')) toolErrors++; },
      }]);
    },
  });
  const cpuMs = ((cpuSeconds(pid) - cpu0) * 1000) / Math.max(1, result.requests.total);
  return { rps: result.requests.average, cpuMs, p50: result.latency.p50, p99: result.latency.p99, bad: result.non2xx + result.errors + result.timeouts, toolErrors };
}

const daemon = await startDaemon();
const bare = await startBare();
const bareShared = await startBare({ BARE_SHARED_VALIDATOR: '1' });
const targets = [
  { name: 'loom /mcp (`/help`)', server: daemon, tool: 'loom' },
  { name: 'bare SDK server (echo)', server: bare, tool: 'echo' },
  { name: 'bare + shared validator (echo)', server: bareShared, tool: 'echo' },
];
try {
  for (const t of targets) await load(t.server, t.tool, 3); // warm-up (JIT, topic actors), not reported
  const rows = [];
  for (let r = 1; r <= ROUNDS; r++) {
    for (const t of targets) rows.push({ round: r, name: t.name, ...(await load(t.server, t.tool, DURATION_S)) });
  }
  const mean = (name, key) => rows.filter((x) => x.name === name).reduce((s, x) => s + x[key], 0) / ROUNDS;
  const line = (x) => `| ${x.round} | ${x.name} | ${x.rps.toFixed(0)} | ${x.p50} | ${x.p99} | ${x.cpuMs.toFixed(2)} | ${x.bad} | ${x.toolErrors} |`;
  const means = targets.map((t) => `| mean | ${t.name} | **${mean(t.name, 'rps').toFixed(0)}** | ${mean(t.name, 'p50').toFixed(1)} | ${mean(t.name, 'p99').toFixed(1)} | **${mean(t.name, 'cpuMs').toFixed(2)}** | | |`);
  const [loom, plain, shared] = targets.map((t) => t.name);
  const pct = (a, b, key) => ((mean(a, key) / mean(b, key)) * 100).toFixed(1);
  writeResult('mcp', 'MCP: tools/call through POST /mcp vs a bare stateless SDK server', `
Load: autocannon, ${CONNECTIONS} connections, ${DURATION_S} s per run, ${ROUNDS} rounds that alternate the servers, after a 3 s
warm-up of each. Every request is a JSON-RPC \`tools/call\` POST with \`Accept: application/json, text/event-stream\`
(JSON responses; stateless: a fresh server and transport per request everywhere). Each connection uses its own
topic, so no Loom call is BUSY (the tool-errors column counts any answer that is not \`isError: false\`).
Loom runs \`/help\` through its full path (Host/Origin checks, agent lookup, body read with the 10 MiB cap, topic queue
machine, command registry, envelope). The bare server (bench/mcp-bare.mjs: Express + express.json + one echo tool)
does no work in its tool; "bare" keeps the SDK default of a new Ajv validator per server, "bare + shared validator"
shares one as Loom does (src/mcp/server.ts), which isolates the cost of Loom's own path.

| round | server | req/s | p50 ms | p99 ms | server CPU ms/request | non-2xx, errors, timeouts | tool errors |
|---|---|---|---|---|---|---|---|
${rows.map(line).join('\n')}
${means.join('\n')}

- Loom / bare (the target, mean req/s): **${pct(loom, plain, 'rps')} %** (target ≥ 90 %).
- Loom / bare + shared validator (mean req/s): ${pct(loom, shared, 'rps')} %.
- Server CPU per request (from /proc; less sensitive than req/s to other load on this shared 2-core machine):
  Loom ${mean(loom, 'cpuMs').toFixed(2)} ms, bare ${mean(plain, 'cpuMs').toFixed(2)} ms, bare + shared validator ${mean(shared, 'cpuMs').toFixed(2)} ms.
`);
} finally {
  for (const t of [bare, bareShared, daemon]) await t.stop();
}
