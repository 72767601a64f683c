// bench/scale: what the daemon holds at rest. 1,000 agents × 5 topics: resident memory (RSS) idle, with
// the topics opened (POST /sessions, no command run), and after one /info in each; cold start (spawn to
// the ready line) with an empty registry and with the 1,000-agent registry. Targets: 1,000 × 5 topics
// <= 150 MiB RSS, cold start <= 300 ms. BENCH_COMPARE_ROOT=<checkout> adds the same rows for another
// build (e.g. main before the actor tree), measured in the same run.
// Then COLD more cold starts of this build, interleaved: on a new data folder at every start (a first
// start: no compile cache, Node 22 and 24 keep it in the data folder), on the empty and on the full
// registry of earlier starts, and bare node, each with the environment as given and, when it sets
// NODE_EXTRA_CA_CERTS, without it. Node 20 reads that file at start-up before any of Loom's code runs
// (~85 ms for Debian's CA bundle here; Node 22 and 24 read it lazily), so the floor it sets is the
// machine's, not the daemon's. Each fresh start is also timed to its first answer (GET /health right
// after the ready line): the ready line does not wait for the Express app (docs/architecture.md,
// "Start-up"), the first answer shows what that leaves for the first request.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, get, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs, median, rssMiB, startDaemon, writeResult } from './common.mjs';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 1000);
const TOPICS = 5;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function post(port, path, body, headers = {}) {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    r.on('error', reject);
    r.end(text);
  });
}

/** Run `fn` over 0..n-1 with at most `width` in flight. */
async function pool(n, width, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => { while (next < n) await fn(next++); }));
}

/** Spawn of a bare `node` that prints its ready line at once (ms): the floor of any cold start on this machine now. */
function bareStart(env = {}) {
  const t0 = process.hrtime.bigint();
  const p = spawn(process.execPath, ['-e', 'console.log("listening")'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  return new Promise((resolve) => p.stdout.once('data', () => { resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, cpu: cpuMs(p.pid) }); p.kill(); }));
}

const settle = () => new Promise((r) => setTimeout(r, 1500));

/** A start on a data folder made for it alone (removed after): ready and first-answer times. */
async function freshStart(env, root) {
  const dataDir = mkdtempSync(join(tmpdir(), 'loom-bench-fresh-'));
  try {
    const d = await startDaemon(env, [], { root, dataDir });
    const t0 = process.hrtime.bigint();
    await new Promise((resolve, reject) => get(`${d.base}/health`, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject));
    const answerMs = d.readyMs + Number(process.hrtime.bigint() - t0) / 1e6;
    await d.stop();
    return { ...d, answerMs };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One round on one build: cold start empty, fill, measure, restart on the full registry. */
async function round(root) {
  const d = await startDaemon({}, [], { root });
  await settle();
  const out = { coldEmpty: d.readyMs, cpuEmpty: d.readyCpuMs, idle: rssMiB(d.pid) };
  await pool(AGENTS, 8, (i) => post(d.port, '/agents', { agent_id: `a${i}` }));
  await settle();
  out.agents = rssMiB(d.pid);
  await pool(AGENTS * TOPICS, 8, (k) => post(d.port, '/sessions', { agent_id: `a${Math.floor(k / TOPICS)}`, topic: `t${k % TOPICS}` }));
  await settle();
  out.topics = rssMiB(d.pid);
  await pool(AGENTS * TOPICS, 8, (k) => post(d.port, '/exec', { cmd: '/info', topic: `t${k % TOPICS}` }, { 'X-Agent-Id': `a${Math.floor(k / TOPICS)}` }));
  await settle();
  out.ran = rssMiB(d.pid);
  await d.stop();
  const again = await startDaemon({}, [], { root, dataDir: d.dataDir });
  out.coldFull = again.readyMs;
  out.cpuFull = again.readyCpuMs;
  await settle();
  out.idleFull = rssMiB(again.pid);
  out.fullDir = d.dataDir;
  await again.stop();
  return out;
}

const builds = { loom: undefined, ...(process.env.BENCH_COMPARE_ROOT ? { compare: process.env.BENCH_COMPARE_ROOT } : {}) };
const results = Object.fromEntries(Object.keys(builds).map((k) => [k, []]));
const loads = [];
const bare = [];
for (let r = 0; r < ROUNDS; r++) {
  bare.push(await bareStart());
  for (const [k, root] of Object.entries(builds)) results[k].push(await round(root));
  loads.push(loadavg()[0]);
}

// Cold starts only, interleaved, on data folders that exist (a user's second and later starts).
const COLD = Number(process.env.BENCH_COLD ?? 7);
const envs = { given: {}, ...(process.env.NODE_EXTRA_CA_CERTS ? { noCa: { NODE_EXTRA_CA_CERTS: undefined } } : {}) };
const emptyDir = (await startDaemon({}, [], {}).then(async (d) => { await d.stop(); return d.dataDir; }));
const fullDir = results.loom.at(-1).fullDir;
// The compare build's empty start joins the same samples, so the two builds' starts are a same-run pair.
const compareRoot = builds.compare;
const compareEmptyDir = compareRoot && (await startDaemon({}, [], { root: compareRoot }).then(async (d) => { await d.stop(); return d.dataDir; }));
const cold = Object.fromEntries(Object.keys(envs).map((e) => [e, { bare: [], bareCpu: [], fresh: [], freshCpu: [], freshAnswer: [], cmpFresh: [], cmpFreshCpu: [], cmpFreshAnswer: [], empty: [], emptyCpu: [], full: [], fullCpu: [], cmpEmpty: [], cmpEmptyCpu: [] }]));
for (let i = 0; i < COLD; i++) {
  for (const [e, env] of Object.entries(envs)) {
    const b = await bareStart(env); cold[e].bare.push(b.ms); cold[e].bareCpu.push(b.cpu);
    // The two builds' first starts in alternating order, so that neither always follows the bare start.
    for (const [k, root] of (i % 2 ? [['cmpFresh', compareRoot], ['fresh', undefined]] : [['fresh', undefined], ['cmpFresh', compareRoot]])) {
      if (k === 'cmpFresh' && !compareRoot) continue;
      const f = await freshStart(env, root);
      cold[e][k].push(f.readyMs); cold[e][`${k}Cpu`].push(f.readyCpuMs); cold[e][`${k}Answer`].push(f.answerMs);
    }
    for (const [k, dataDir] of [['empty', emptyDir], ['full', fullDir]]) {
      const d = await startDaemon(env, [], { dataDir });
      cold[e][k].push(d.readyMs); cold[e][`${k}Cpu`].push(d.readyCpuMs);
      await d.stop();
    }
    if (compareRoot) {
      const d = await startDaemon(env, [], { root: compareRoot, dataDir: compareEmptyDir });
      cold[e].cmpEmpty.push(d.readyMs); cold[e].cmpEmptyCpu.push(d.readyCpuMs);
      await d.stop();
    }
  }
}
const envLabel = (e) => (e === 'given' ? (process.env.NODE_EXTRA_CA_CERTS ? 'as given (NODE_EXTRA_CA_CERTS set)' : 'as given') : 'NODE_EXTRA_CA_CERTS unset');
const coldRows = Object.keys(envs).map((e) => {
  const c = cold[e]; const f = (a) => median(a).toFixed(0);
  return `| ${envLabel(e)} | ${f(c.bare)} | **${f(c.empty)}** | **${f(c.full)}** | ${f(c.empty.map((x, i) => x - c.bare[i]))} | ${f(c.full.map((x, i) => x - c.bare[i]))} | ${f(c.bareCpu)} | ${f(c.emptyCpu)} | ${f(c.fullCpu)} |`;
}).join('\n');
const freshRows = Object.keys(envs).flatMap((e) => {
  const c = cold[e]; const f = (a) => median(a).toFixed(0);
  const row = (name, k) => `| ${envLabel(e)} | ${name} | ${f(c.bare)} | **${f(c[k])}** | **+${f(c[k].map((x, i) => x - c.bare[i]))}** | ${f(c[`${k}Answer`])} | ${f(c[`${k}Answer`].map((x, i) => x - c.bare[i]))} | ${f(c.bareCpu)} | ${f(c[`${k}Cpu`])} |`;
  return [row('this build', 'fresh'), ...(compareRoot ? [row(`compare: ${compareRoot}`, 'cmpFresh')] : [])];
}).join('\n');

const m = (k, f) => median(results[k].map((x) => x[f]));

/** The cold-start and memory targets, each against its in-run baseline: the bare node start, and the compare build when there is one. */
function summary() {
  const c = cold.noCa ?? cold.given;
  const overBare = median(c.fresh.map((x, i) => x - c.bare[i]));
  const cpuOverBare = median(c.freshCpu) - median(c.bareCpu);
  const lines = [`Against the targets: cold start on a new data folder${cold.noCa ? ' (NODE_EXTRA_CA_CERTS unset)' : ''} minus bare node **+${overBare.toFixed(0)} ms** (target ≤ +100 ms),`
    + ` ${(median(c.fresh) / median(c.bare)).toFixed(1)}× bare; CPU to ready minus bare +${cpuOverBare.toFixed(0)} ms; to the first answer +${median(c.freshAnswer.map((x, i) => x - c.bare[i])).toFixed(0)} ms.`
    + ` RSS at ${AGENTS} agents × ${TOPICS} topics **${m('loom', 'topics').toFixed(1)} MiB** (target ≤ 90 MiB).`];
  if (compareRoot) {
    lines.push(`New data folder, the compare build: +${median(c.cmpFresh.map((x, i) => x - c.bare[i])).toFixed(0)} ms to ready, +${median(c.cmpFreshAnswer.map((x, i) => x - c.bare[i])).toFixed(0)} ms to the first answer;`
      + ` this build minus the compare build per sample (median) ${median(c.fresh.map((x, i) => x - c.cmpFresh[i])).toFixed(0)} ms to ready, ${median(c.freshAnswer.map((x, i) => x - c.cmpFreshAnswer[i])).toFixed(0)} ms to the first answer.`);
  }
  if (results.compare) {
    const ratio = (f) => `${((100 * m('loom', f)) / m('compare', f)).toFixed(1)} %`;
    lines.push(`This build against the compare build, same rounds: RSS at ${AGENTS} × ${TOPICS} ${ratio('topics')}, after one /info each ${ratio('ran')}, CPU to ready (empty) ${ratio('cpuEmpty')}.`);
    const cmpOverBare = median(c.cmpEmpty.map((x, i) => x - c.bare[i]));
    lines.push(`Cold start, empty data folder, the ${COLD} interleaved samples above: the compare build minus bare node +${cmpOverBare.toFixed(0)} ms, this build +${overBare.toFixed(0)} ms`
      + ` (per-sample difference, median: ${median(c.empty.map((x, i) => x - c.cmpEmpty[i])).toFixed(0)} ms); CPU to ready ${median(c.cmpEmptyCpu).toFixed(0)} against ${median(c.emptyCpu).toFixed(0)} ms.`);
  }
  return lines.join('\n');
}
const rows = Object.keys(builds).map((k) => {
  const name = k === 'loom' ? 'this build' : `compare: ${builds[k]}`;
  return `| ${name} | ${m(k, 'idle').toFixed(1)} | ${m(k, 'agents').toFixed(1)} | **${m(k, 'topics').toFixed(1)}** | ${m(k, 'ran').toFixed(1)} | ${m(k, 'idleFull').toFixed(1)} | ${m(k, 'coldEmpty').toFixed(0)} | **${m(k, 'coldFull').toFixed(0)}** | ${m(k, 'cpuEmpty').toFixed(0)} | **${m(k, 'cpuFull').toFixed(0)}** |`;
}).join('\n');
writeResult('scale', `Resident memory and cold start at ${AGENTS} agents × ${TOPICS} topics`, `
${ROUNDS} rounds per build (builds alternating), medians. RSS (MiB) read from /proc 1.5 s after each step:
idle (empty registry); after registering ${AGENTS} agents; after opening ${TOPICS} topics each with POST /sessions (no
command run); after one \`/info\` in every topic; idle after a restart on the full registry. Cold start (ms): spawn of
\`node dist/cli/main.js daemon\` (the line of \`npm start\` and \`loom start\`) to its ready line, empty registry and ${AGENTS}-agent registry; the floor on this machine
in the same run, a bare \`node -e\` printing a line: **${median(bare.map((b) => b.ms)).toFixed(0)} ms** (median; ${bare.map((b) => b.ms.toFixed(0)).join(', ')}).
CPU time (user + system, 10 ms ticks) the process spent up to its ready line, which a loaded machine disturbs far less
than wall time: bare node ${median(bare.map((b) => b.cpu)).toFixed(0)} ms.
Load average per round: ${loads.map((x) => x.toFixed(2)).join(', ')}; after the cold starts ${loadavg()[0].toFixed(2)}.

| build | idle | ${AGENTS} agents | + ${AGENTS * TOPICS} topics | + one /info each | restarted, full registry | cold start empty | cold start ${AGENTS} agents | CPU to ready, empty | CPU to ready, ${AGENTS} agents |
|---|---|---|---|---|---|---|---|---|---|
${rows}

**First starts** (${COLD} interleaved samples, medians, ms): each on a data folder made for it alone (no compile cache, no
registry), to the ready line and to the answer of a GET /health sent at once after it; minus the bare node of the same sample.

| environment | build | bare node | ready | ready − bare | first answer | first answer − bare | CPU bare | CPU to ready |
|---|---|---|---|---|---|---|---|---|
${freshRows}

**Cold starts** (${COLD} interleaved samples of each, medians, ms): bare \`node -e\`, the daemon on an empty and on the
${AGENTS}-agent registry (data folders that exist: a second start), the daemon minus the bare node of the same
sample, and CPU to ready. Node 20 reads NODE_EXTRA_CA_CERTS at start-up, before any of Loom's code (Node 22 and 24
read it when TLS first needs it), so the row without it is what a machine without that variable sees.

| environment | bare node | daemon, empty | daemon, ${AGENTS} agents | empty − bare | ${AGENTS} agents − bare | CPU bare | CPU empty | CPU ${AGENTS} agents |
|---|---|---|---|---|---|---|---|---|
${coldRows}

Targets: ${AGENTS} agents × ${TOPICS} topics ≤ 90 MiB; a first start ≤ bare node + 100 ms.
${summary()}`);
