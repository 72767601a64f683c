// Summarise a V8 .cpuprofile (node --cpu-prof): self time by where the code lives (a Loom module under dist/,
// an npm package, Node's own modules, GC, native) and the functions with the most self time.
// Usage as a script: node bench/profile.mjs <file.cpuprofile>
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where a profile node's code lives. */
function placeOf(url) {
  if (!url) return null;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return `npm ${pkg[1]}`;
  const loom = /\/dist\/(.+)\.js$/.exec(url);
  if (loom) return `loom ${loom[1]}`;
  if (url.startsWith('node:')) return `node ${url.slice(5).split('/')[0]}`;
  return url;
}

/** Self time (µs) per profile node id, from samples and time deltas. */
function selfTimes(p) {
  const t = new Map();
  for (let i = 0; i < p.samples.length; i++) t.set(p.samples[i], (t.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  return t;
}

/** A markdown summary of one profile (busy time only: idle excluded). */
export function summarise(file, top = 15) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const self = selfTimes(p);
  const byPlace = new Map();
  const byFn = new Map();
  let busy = 0;
  for (const n of p.nodes) {
    const us = self.get(n.id) ?? 0;
    const { functionName, url, lineNumber } = n.callFrame;
    if (functionName === '(idle)' || us === 0) continue;
    busy += us;
    const place = placeOf(url) ?? functionName;
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${placeOf(url) ?? ''}${url ? `:${lineNumber + 1}` : ''}`.trim();
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
  }
  const rows = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, us]) => `| ${k} | ${(us / 1000).toFixed(0)} | ${((100 * us) / busy).toFixed(1)} % |`).join('\n');
  return `Busy (non-idle) CPU time: ${(busy / 1e6).toFixed(2)} s.\n\n| where | self ms | share |\n|---|---|---|\n${rows(byPlace)}\n\n| function | self ms | share |\n|---|---|---|\n${rows(byFn)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(summarise(process.argv[2], Number(process.argv[3] ?? 25)));
