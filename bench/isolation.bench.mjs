// bench/isolation: an actor runtime promises that one mailbox's work does not stall another's.
// Topic A runs `/info` one request at a time while topic B, of the same agent, re-opens a 1 MiB
// document that changes before every open (so the parse cache never helps). Reported: /info latency
// on A alone (baseline) and with B busy, in interleaved rounds; target p99 <= 25 ms with B busy.
// A third mode (behaviour.md §16): another agent points every file command at a FIFO, /dev/zero,
// /dev/tty, a 2 GiB sparse file and a file growing while read, in a loop, while A sends /info.
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, percentile, startDaemon, writeResult } from './common.mjs';
import { summarise } from './profile.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_BYTES = 1 << 20;

/** One POST /exec on its own keep-alive agent; resolves with the latency in ms and the content. */
function execOn(agent, port, topic, cmd, agentId = 'iso') {
  const body = JSON.stringify({ cmd, topic });
  const t = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path: '/exec', method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'X-Agent-Id': agentId, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
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

// The hostile agent: /dev is an allowed path; a FIFO, a 2 GiB sparse file and a growing file in its home.
const evilHome = mkdtempSync(join(tmpdir(), 'loom-iso-evil-'));
await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'evil', home: evilHome, allowed_paths: ['/dev'] }) });
spawnSync('mkfifo', [join(evilHome, 'p.md')]);
closeSync(openSync(join(evilHome, 'huge.md'), 'w'));
truncateSync(join(evilHome, 'huge.md'), 2 ** 31);
writeFileSync(join(evilHome, 'doc.md'), "# Doc\n\n```act.note\nCLI printf '%s' {text}\n  text: string (required)\n```\n");
// Appends 64 KiB every 5 ms between 12 and 44 MiB: always growing, always over every command's limit, never filling the disk.
const growing = join(evilHome, 'grow.md');
writeFileSync(growing, Buffer.alloc(12 * 1048576, 97));
const grower = spawn(process.execPath, ['-e', `
  const fs = require('fs'); const p = ${JSON.stringify(growing)}; const c = Buffer.alloc(65536, 97);
  setInterval(() => { if (fs.statSync(p).size > 44 * 1048576) fs.truncateSync(p, 12 * 1048576); fs.appendFileSync(p, c); }, 5);`], { stdio: 'ignore' });
process.on('exit', () => grower.kill('SIGKILL'));
const e = new Agent({ keepAlive: true, maxSockets: 1 });
await execOn(e, d.port, 'E', '/open ~/doc.md', 'evil');
const HOSTILE = ['/open ~/p.md', '/edit ~/p.md', '/source /dev/zero', '/append ~/p.md\nx', '/write --force /dev/zero\nx',
  '/replace ~/p.md --lines 1\nx', '/install ~/p.md', '/install /dev/tty', '/open ~/huge.md', '/edit ~/huge.md', '/open ~/grow.md',
  '/edit ~/grow.md', '/install ~/grow.md', '/act.note --text-file /dev/zero', '/act.note --text-file ~/grow.md', '/edit /dev/tty'];

/** /info on A for `seconds`; when `busy`, B re-opens the changed document ('doc') or the hostile agent loops over HOSTILE ('hostile'). */
async function round(busy) {
  const until = Date.now() + SECONDS * 1000;
  let opens = 0;
  const bLoop = (async () => {
    let n = 0;
    while (busy === 'doc' && Date.now() < until) {
      writeFileSync(file, `${doc}\n<!-- change ${n++} -->\n`);
      await execOn(b, d.port, 'B', '/refresh');
      opens++;
    }
    while (busy === 'hostile' && Date.now() < until) {
      const r = await execOn(e, d.port, 'E', HOSTILE[n++ % HOSTILE.length], 'evil');
      if (!r.text.includes('ERROR(')) throw new Error(`hostile command not refused: ${r.text.slice(0, 300)}`);
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
const hostile = [];
const opens = [];
const refusals = [];
const loads = [];
await round('doc'); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  quiet.push(...(await round(false)).lat);
  const br = await round('doc');
  busy.push(...br.lat);
  opens.push(br.opens);
  const hr = await round('hostile');
  hostile.push(...hr.lat);
  refusals.push(hr.opens);
  loads.push(loadavg()[0]);
}
grower.kill('SIGKILL');
await d.stop();
rmSync(evilHome, { recursive: true, force: true });
rmSync(d.dataDir, { recursive: true, force: true });
const row = (name, l) => `| ${name} | ${l.length} | ${median(l).toFixed(2)} | ${percentile(l, 99).toFixed(2)} | ${Math.max(...l).toFixed(2)} |`;
writeResult('isolation', '/info on topic A while topic B re-opens a changed 1 MiB document', `
Document: ${(Buffer.byteLength(doc) / 1048576).toFixed(2)} MiB of corpus action documents (${(doc.match(/\`\`\`act\./g) ?? []).length} act blocks), changed before
every \`/refresh\` on topic B (no parse-cache hits). Topic A sends \`/info\` one at a time. ${ROUNDS} rounds of ${SECONDS} s
with B idle, with B busy and with the hostile agent busy, interleaved, after a discarded warm-up round; B completed ${opens.join(', ')} re-opens per busy
round; load average per round ${loads.map((x) => x.toFixed(2)).join(', ')}.

| topic A /info | requests | p50 ms | p99 ms | max ms |
|---|---|---|---|---|
${row('B idle', quiet)}
${row('B re-opening the 1 MiB document', busy)}
${row('another agent pointing commands at FIFOs, devices, growing and 2 GiB files', hostile)}

p99 with B busy: **${percentile(busy, 99).toFixed(2)} ms**; with the hostile agent: **${percentile(hostile, 99).toFixed(2)} ms** (target ≤ 25 ms).
The hostile agent loops over ${HOSTILE.length} commands (\`${HOSTILE.map((c) => c.split('\n')[0]).join('\`, \`')}\`), each refused;
it completed ${refusals.join(', ')} refusals per round.
${profileDir ? `\n### The daemon's main thread (BENCH_PROFILE=1, whole run)\n\n${summarise(join(profileDir, readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'))))}` : ''}`);
