// bench/inspector: what the state inspector costs on the /exec hot path (behaviour.md §13: "costs
// nothing while nobody watches"). The load of bench/exec (POST /exec /help, 16 connections over 16
// topics, autocannon keep-alive) against, in the same run and alternating round by round:
//   before     the daemon built without the inspector (this source with inspectorFeature left out of
//              src/features.ts; BENCH_BEFORE=<git rev> builds that revision instead,
//              BENCH_BEFORE=no-history this source with the per-topic history switched off)
//   unwatched  this daemon, no inspector client attached              (target: within 3 % of before)
//   client     the same daemon process with a bare WebSocket client (bench/inspector-client.mjs) parsing
//              every frame: what feeding a watcher costs the daemon itself
//   watched    the same daemon process with the inspector page open in headless Debian chromium,
//              rendering the live feed                                  (target: within 15 % of before)
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { chromium } from 'playwright-core';
import { cpuMs, median, root, startDaemon, writeResult } from './common.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 16;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Build the "before" daemon into bench/.tmp/before; returns its CLI entry. */
function buildBefore() {
  const dir = join(root, 'bench', '.tmp', 'before');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const rev = process.env.BENCH_BEFORE;
  if (rev === 'no-history') {
    // This source with the per-topic history recording nothing: the A/B for the history ring's own cost.
    for (const f of ['src', 'web', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(root, f), join(dir, f), { recursive: true });
    const file = join(dir, 'src', 'services', 'topicHistory.ts');
    const text = readFileSync(file, 'utf8');
    const patched = text
      .replace(/(\n  snapshot\(topicId: string, value: unknown, event: string, now: \(\) => number\): void \{\n)/, '$1    if (topicId) return;\n')
      .replace(/(\n  session\(topicId: string, ev: SessionEvent, uri: string \| null\): SessionDetail \| null \{\n)/, '$1    if (topicId) return null;\n');
    if ((patched.match(/if \(topicId\) return/g) ?? []).length !== 2) throw new Error('could not switch the history off in src/services/topicHistory.ts');
    writeFileSync(file, patched);
  } else if (rev) {
    const tar = execFileSync('git', ['-C', root, 'archive', rev, 'src', 'web', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json'], { maxBuffer: 1 << 28 });
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
  } else {
    for (const f of ['src', 'web', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(root, f), join(dir, f), { recursive: true });
    const file = join(dir, 'src', 'features.ts');
    const text = readFileSync(file, 'utf8');
    const stripped = text.replace(/^import \{ inspectorFeature \}.*\n/m, '').replace(/^\s*inspectorFeature,\n/m, '');
    if (stripped === text || stripped.includes('inspectorFeature')) throw new Error('could not leave the inspector out of src/features.ts');
    writeFileSync(file, stripped);
  }
  // Same dependencies and native helper as this checkout.
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  if (existsSync(join(root, 'build'))) symlinkSync(join(root, 'build'), join(dir, 'build'));
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.build.json')], { stdio: 'inherit' });
  // Bundled as `npm run build` bundles this checkout: tsc's output alone ran /exec ~10 % slower here,
  // which made the daemon with the inspector look faster than the one without.
  // A revision is bundled by its own script (the bundles' entries differ between revisions).
  if (!rev) {
    mkdirSync(join(dir, 'scripts'), { recursive: true });
    cpSync(join(root, 'scripts', 'bundle.mjs'), join(dir, 'scripts', 'bundle.mjs'));
  }
  execFileSync(process.execPath, [join(dir, 'scripts', 'bundle.mjs')], { stdio: 'inherit' });
  return { root: dir, label: `${rev === 'no-history' ? 'this source with the per-topic history recording nothing' : rev ? `git ${rev}` : 'this source without inspectorFeature'}, built and bundled as npm run build does` };
}

function load(base) {
  let n = 0;
  return autocannon({
    url: `${base}/exec`, connections: CONNECTIONS, duration: DURATION, method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Agent-Id': 'bench' },
    setupClient: (client) => { const topic = `t${n++ % CONNECTIONS}`; client.setBody(JSON.stringify({ cmd: '/help', topic })); },
  });
}

async function register(base) {
  const r = await fetch(`${base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'bench' }) });
  if (r.status !== 200 && r.status !== 201) throw new Error(`POST /agents: ${r.status}`);
}

const before = buildBefore();
const old = await startDaemon({}, [], { root: before.root });
const now = await startDaemon();
await register(old.base);
await register(now.base);

const profile = mkdtempSync(join(tmpdir(), 'loom-bench-chromium-'));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM, headless: true, viewport: { width: 1280, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = browser.pages()[0] ?? (await browser.newPage());

/** Open the inspector on the current daemon and wait until it is live. */
async function attach() {
  await page.goto(`${now.base}/inspect`);
  await page.waitForSelector('#conn[data-conn="live"]');
}
/** Leave the page: its WebSocket closes, the daemon stops observing. */
async function detach() {
  await page.goto('about:blank');
}

/**
 * The load, plus the daemon's CPU time per answered request (user + system from /proc): the figure a
 * shared machine disturbs least, where req/s moves by 10 points between rounds.
 */
async function measured(d) {
  const c0 = cpuMs(d.pid);
  const r = await load(d.base);
  r.cpuUsPerReq = ((cpuMs(d.pid) - c0) * 1000) / Math.max(1, r.requests.total);
  return r;
}

/** CPU time (ms) of every chromium process now (the browser, its renderer and helpers). */
function chromiumCpuMs() {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!/^(chromium|chrome)/.test(readFileSync(`/proc/${pid}/comm`, 'utf8'))) continue;
      total += cpuMs(pid);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/** A bare WebSocket client (bench/inspector-client.mjs) attached for the length of `fn`. */
async function withBareClient(fn) {
  const p = spawn(process.execPath, [join(root, 'bench', 'inspector-client.mjs'), now.base], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (c) => { out += c; });
  await new Promise((res, rej) => { p.stdout.on('data', () => out.includes('ready') && res()); p.once('exit', () => rej(new Error('inspector client exited'))); });
  const c0 = cpuMs(p.pid);
  const r = await fn();
  r.clientCpuMs = cpuMs(p.pid) - c0;
  p.stdin.end();
  await new Promise((res) => p.once('exit', res));
  r.messages = Number(/messages (\d+)/.exec(out)?.[1] ?? 0);
  return r;
}

const targets = {
  before: () => measured(old),
  unwatched: () => measured(now),
  // What feeding one watcher costs the daemon, without a browser drawing on the same two cores.
  client: () => withBareClient(() => measured(now)),
  watched: async () => {
    await attach();
    const b0 = chromiumCpuMs();
    const r = await measured(now);
    r.browserCpuUsPerReq = ((chromiumCpuMs() - b0) * 1000) / Math.max(1, r.requests.total);
    // The page kept up: it shows the 16 topics it was fed during the round.
    r.topicsShown = await page.locator('article.topic').count();
    await detach();
    return r;
  },
};
for (const run of Object.values(targets)) await run();
const runs = { before: [], unwatched: [], client: [], watched: [] };
const loads = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const [k, run] of Object.entries(targets)) runs[k].push(await run());
  loads.push(loadavg()[0]);
}
await browser.close();
rmSync(profile, { recursive: true, force: true });
await old.stop();
await now.stop();

const rps = (k) => runs[k].map((r) => r.requests.average);
const ratios = (k) => runs[k].map((r, i) => r.requests.average / runs.before[i].requests.average);
const pct = (x) => `${(100 * x).toFixed(1)} %`;
const perRound = runs.before.map((b, i) => `| ${i + 1} | ${Math.round(b.requests.average)} | ${Math.round(runs.unwatched[i].requests.average)} | ${Math.round(runs.client[i].requests.average)} | ${Math.round(runs.watched[i].requests.average)} | ${pct(ratios('unwatched')[i])} | ${pct(ratios('client')[i])} | ${pct(ratios('watched')[i])} | ${runs.watched[i].topicsShown} | ${loads[i].toFixed(2)} |`).join('\n');
const cpu = (k) => median(runs[k].map((r) => r.cpuUsPerReq));
const row = (name, k) => `| ${name} | ${Math.round(median(rps(k)))} | ${Math.round(cpu(k))} | ${median(runs[k].map((r) => r.latency.p50))} | ${median(runs[k].map((r) => r.latency.p99))} | ${runs[k].reduce((a, r) => a + r.non2xx + r.errors, 0)} |`;
const unwatched = median(ratios('unwatched'));
const watched = median(ratios('watched'));
writeResult('inspector', 'State inspector cost on POST /exec (/help, 16 connections, 16 topics)', `
${ROUNDS} rounds of ${DURATION} s per variant, alternating, after a discarded warm-up run of each; autocannon
(this process), HTTP/1.1 keep-alive. "before": ${before.label}. "unwatched" and "watched" are the same daemon
process; "watched" has the inspector page open in headless chromium (${CHROMIUM}) for the whole round.

| round | before req/s | unwatched req/s | bare client req/s | page req/s | unwatched / before | bare client / before | page / before | topics on the page | load avg |
|---|---|---|---|---|---|---|---|---|---|
${perRound}

| variant | req/s (median) | daemon CPU µs/request (median) | p50 ms | p99 ms | non-2xx + errors |
|---|---|---|---|---|---|
${row('before (no inspector)', 'before')}
${row('inspector, nobody watching', 'unwatched')}
${row('inspector, a bare WebSocket client attached', 'client')}
${row('inspector, one page attached', 'watched')}

The bare client (bench/inspector-client.mjs, its own process) parses every frame and draws nothing: it received
${Math.round(median(runs.client.map((r) => r.messages / r.requests.total)) * 10) / 10} messages per answered command and used
${Math.round(median(runs.client.map((r) => (r.clientCpuMs * 1000) / r.requests.total)))} µs of CPU per command. The page's chromium processes used
**${Math.round(median(runs.watched.map((r) => r.browserCpuUsPerReq)))} µs** of CPU per answered command, on the same two cores as the daemon and the load generator.

Unwatched: **${pct(unwatched)}** of before (target ≥ 97 %); one page attached: **${pct(watched)}** of before
(target ≥ 85 %); a bare client attached: **${pct(median(ratios('client')))}**; medians of the per-round ratios. Daemon CPU per
request: unwatched **${pct(cpu('unwatched') / cpu('before') - 1)}** more than before, bare client **${pct(cpu('client') / cpu('before') - 1)}**,
page **${pct(cpu('watched') / cpu('before') - 1)}** (the browser's own CPU not counted there).
`);
