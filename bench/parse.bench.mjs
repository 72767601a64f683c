// Parser and /open benchmark: parse time and memory for the whole corpus and for one generated
// 1 MiB document with 500 actions; /open latency of a 100 KiB local document through /exec.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { root, startDaemon, writeResult } from './common.mjs';

setFlagsFromString('--expose-gc');
const loadAtStart = loadavg().map((x) => x.toFixed(2)).join(', ');
const gc = runInNewContext('gc');
const { parseDocument } = await import(join(root, 'dist/sfmd/parse.js'));

// The repository's copy of the corpus (test/fixtures/apps; licence notice beside it).
const corpusDir = join(root, 'test', 'fixtures', 'apps');
const files = (function walk(d) {
  return readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : n.endsWith('.md') ? [join(d, n)] : []));
})(corpusDir);
const corpus = files.map((f) => readFileSync(f, 'utf8'));
const corpusBytes = corpus.reduce((s, t) => s + Buffer.byteLength(t), 0);

/** One generated document: 500 actions with parameters, bodies and templates, padded with prose to 1 MiB. */
function generated() {
  const F = '```';
  const parts = ['---', 'title: Generated', 'requires: [TOKEN]', '---', '[!nav:main](./nav.md)', '', '# Generated', ''];
  for (let i = 0; i < 500; i++) {
    parts.push(`## Section ${i}`, '', `Prose for action ${i} with a [@s${i} link](./p${i}.md).`, '');
    if (i % 2) parts.push(`${F}act.a${i}`, `POST https://api.test/items/{id} -H "Authorization: Bearer $TOKEN"`, '  id: string (required) "Item id"', '  n, -n: number (min:1, max:100) "Count" = "5"', '  body:', '    {"n": {n}, "note": "{note}"}', '  note: string "Note"', F);
    else parts.push(`${F}act.a${i}`, 'CLI echo {x} | tr a-z A-Z', '  x: string (required) "Text"', F);
    parts.push('', `${F}act.a${i}.response`, 'for: r in Response.body.items', '- {r.name}', 'end:', F, '');
  }
  let text = parts.join('\n');
  const filler = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.\n\n';
  while (Buffer.byteLength(text) < 1024 * 1024) text += filler;
  return text;
}
const big = generated();

function timeParse(texts, rounds) {
  for (const t of texts) parseDocument(t); // warm-up
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (const t of texts) parseDocument(t);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], min: times[0], max: times[times.length - 1] };
}

function retained(texts) {
  gc();
  const before = process.memoryUsage().heapUsed;
  const keep = texts.map((t) => parseDocument(t));
  gc();
  const after = process.memoryUsage().heapUsed;
  return { bytes: after - before, actions: keep.reduce((s, d) => s + d.actions.length, 0), warnings: keep.reduce((s, d) => s + d.warnings.length, 0) };
}

const mib = (b) => (b / 1024 / 1024).toFixed(2);
const corpusTime = timeParse(corpus, 20);
const corpusMem = retained(corpus);
const bigTime = timeParse([big], 10);
const bigMem = retained([big]);
const peakRss = process.memoryUsage().rss;

// /open latency through /exec against the built daemon.
const d = await startDaemon();
const home = mkdtempSync(join(tmpdir(), 'loom-bench-home-'));
await fetch(`${d.base}/agents`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_id: 'bench', home }) });
mkdirSync(join(home, 'docs'), { recursive: true });
let doc = '# Bench document\n\n';
for (let i = 0; doc.length < 100 * 1024; i++) doc += `## Part ${i}\n\nSome text for part ${i}, with a [link](./x${i}.md).\n\n${i % 10 === 0 ? `\`\`\`act.p${i}\nGET https://api.test/{q}\n  q: string (required) "Query"\n\`\`\`\n\n` : ''}`;
writeFileSync(join(home, 'docs/bench.md'), doc);
async function exec(cmd) {
  const res = await fetch(`${d.base}/exec`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Agent-Id': 'bench' }, body: JSON.stringify({ cmd, topic: 'main' }) });
  const text = await res.text();
  if (!text.includes('"ok":true')) throw new Error(`failed: ${text.slice(0, 300)}`);
}
async function series(change) {
  const lat = [];
  for (let i = 0; i < 220; i++) {
    if (change) writeFileSync(join(home, 'docs/bench.md'), `${doc}\nrevision ${i}\n`);
    const t0 = process.hrtime.bigint();
    await exec('/open ~/docs/bench.md');
    if (i >= 20) lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  lat.sort((a, b) => a - b);
  const pct = (p) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))].toFixed(2);
  const mean = (lat.reduce((s, x) => s + x, 0) / lat.length).toFixed(2);
  return `| ${mean} ms | ${pct(50)} ms | ${pct(95)} ms | ${pct(99)} ms | ${lat[lat.length - 1].toFixed(2)} ms |`;
}
const unchanged = await series(false);
const changed = await series(true);
await d.stop();

writeResult('parse', 'Documents: parser and /open (issue 5)', `
No target yet (numbers to compare next turn). Load average when the run started: ${loadAtStart} (on a shared machine other
work inflates these numbers; compare runs at similar load). Parse runs in-process on the built parser (\`dist/sfmd/parse.js\`);
memory is the heap retained by the parsed documents (after GC), peak RSS is the bench process.

| Input | Size | Actions | Warnings | Parse median (min–max) | Retained heap |
|---|---|---|---|---|---|
| Corpus: ${files.length} files | ${mib(corpusBytes)} MiB | ${corpusMem.actions} | ${corpusMem.warnings} | ${corpusTime.median.toFixed(1)} ms (${corpusTime.min.toFixed(1)}–${corpusTime.max.toFixed(1)}) | ${mib(corpusMem.bytes)} MiB |
| Generated document | ${mib(Buffer.byteLength(big))} MiB | ${bigMem.actions} | ${bigMem.warnings} | ${bigTime.median.toFixed(1)} ms (${bigTime.min.toFixed(1)}–${bigTime.max.toFixed(1)}) | ${mib(bigMem.bytes)} MiB |

Peak RSS of the bench process: ${mib(peakRss)} MiB.

\`/open\` of a ${(Buffer.byteLength(doc) / 1024).toFixed(0)} KiB local document (${doc.split('act.').length - 1} actions) through \`POST /exec\`, one client, sequential,
200 calls after 20 warm-up calls. "unchanged": the same file every time (the parse cache of
\`src/commands/documents/parseCache.ts\` answers); "changed": the file is rewritten before every call, so every
\`/open\` parses it again.

| File | mean | p50 | p95 | p99 | max |
|---|---|---|---|---|---|
| unchanged ${unchanged}
| changed ${changed}
`);
