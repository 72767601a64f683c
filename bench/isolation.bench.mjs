// bench/isolation: an actor runtime promises that one mailbox's work does not stall another's.
// Topic A runs `/info` one request at a time while topic B, of the same agent, re-opens a 1 MiB
// document that changes before every open (so the parse cache never helps). Reported: /info latency
// on A alone (baseline) and with B busy, in interleaved rounds; target p99 <= 25 ms with B busy.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, percentile, startDaemon, writeResult } from './common.mjs';
import { summarise } from './profile.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_BYTES = 1 << 20;

/** One POST /exec on its own keep-alive agent; resolves with the latency in ms and the content. */
function execOn(agent, port, topic, cmd) {
  const body = JSON.stringify({ cmd, topic });
  const t = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path: '/exec', method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'X-Agent-Id': 'iso', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - t) / 1e6, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** A 1 MiB action document made of real corpus documents (headings, prose, lists, code, act blocks). */
function bigDocument() {
  // The repository's copy of the corpus (test/fixtures/apps; licence notice beside it).
  const corpus = join(import.meta.dirname, '..', 'test', 'fixtures', 'apps', 'apps', 'apps');
  const parts = [];
  for (const app of readdirSync(corpus)) {
    try { parts.push(readFileSync(join(corpus, app, 'string.md'), 'utf8').replace(/^---[\s\S]*?\n---\n/, '')); } catch { /* an app without a root page */ }
  }
  let out = '# Big document\n\n';
  for (let i = 0; Buffer.byteLength(out) < TARGET_BYTES; i++) out += `\n## Section ${i}\n\n${parts[i % parts.length].replace(/```act\.([a-z0-9_-]+)/g, `\`\`\`act.$1-${i}`).replace(/```act\.([a-z0-9_-]+)\.response/g, '```act.$1.response')}\n`;
  return out;
}

const profileDir = process.env.BENCH_PROFILE ? mkdtempSync(join(tmpdir(), 'loom-prof-')) : null;
const d = await startDaemon({}, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []);
await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'iso' }) });
const home = JSON.parse(await (await fetch(`${d.base}/agents`)).text()).agents.find((a) => a.id === 'iso').home;
const doc = bigDocument();
const file = join(home, 'big.md');
writeFileSync(file, doc);
const a = new Agent({ keepAlive: true, maxSockets: 1 });
const b = new Agent({ keepAlive: true, maxSockets: 1 });
const first = await execOn(b, d.port, 'B', '/open ~/big.md');
if (!first.text.includes('Opened ~/big.md')) throw new Error(`open failed: ${first.text.slice(0, 300)}`);

/** /info on A for `seconds`; B re-opens the changed document in a loop when `busy`. */
async function round(busy) {
  const until = Date.now() + SECONDS * 1000;
  let opens = 0;
  const bLoop = (async () => {
    let n = 0;
    while (busy && Date.now() < until) {
      writeFileSync(file, `${doc}\n<!-- change ${n++} -->\n`);
      await execOn(b, d.port, 'B', '/refresh');
      opens++;
    }
  })();
  const lat = [];
  while (Date.now() < until) lat.push((await execOn(a, d.port, 'A', '/info')).ms);
  await bLoop;
  return { lat, opens };
}

const quiet = [];
const busy = [];
const opens = [];
const loads = [];
await round(true); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  quiet.push(...(await round(false)).lat);
  const br = await round(true);
  busy.push(...br.lat);
  opens.push(br.opens);
  loads.push(loadavg()[0]);
}
await d.stop();
const row = (name, l) => `| ${name} | ${l.length} | ${median(l).toFixed(2)} | ${percentile(l, 99).toFixed(2)} | ${Math.max(...l).toFixed(2)} |`;
writeResult('isolation', '/info on topic A while topic B re-opens a changed 1 MiB document', `
Document: ${(Buffer.byteLength(doc) / 1048576).toFixed(2)} MiB of corpus action documents (${(doc.match(/\`\`\`act\./g) ?? []).length} act blocks), changed before
every \`/refresh\` on topic B (no parse-cache hits). Topic A sends \`/info\` one at a time. ${ROUNDS} rounds of ${SECONDS} s
with B idle and with B busy, interleaved, after a discarded warm-up round; B completed ${opens.join(', ')} re-opens per busy
round; load average per round ${loads.map((x) => x.toFixed(2)).join(', ')}.

| topic A /info | requests | p50 ms | p99 ms | max ms |
|---|---|---|---|---|
${row('B idle', quiet)}
${row('B re-opening the 1 MiB document', busy)}

p99 with B busy: **${percentile(busy, 99).toFixed(2)} ms** (target ≤ 25 ms).
${profileDir ? `\n### The daemon's main thread (BENCH_PROFILE=1, whole run)\n\n${summarise(join(profileDir, readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'))))}` : ''}`);
