#!/usr/bin/env node
// Interleaved A/B of one persistent shell, in one process: serial `echo hi` commands per second through
// ShellProcess of this build against another checkout's build (BENCH_COMPARE_ROOT=<checkout>, built).
// Both shells run in turn, 3 s each, 5 rounds, order alternating; prints rows and the median ratio.
// Used to compare commands delivered through the shell's named pipe with commands typed on the PTY.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { root } from './common.mjs';

const other = process.env.BENCH_COMPARE_ROOT;
if (!other) { console.error('set BENCH_COMPARE_ROOT to a built checkout'); process.exit(2); }
const mods = {
  this: await import(join(root, 'dist/effects/shellProcess.js')),
  compare: await import(join(other, 'dist/effects/shellProcess.js')),
};

function shell(mod) {
  return new Promise((resolve) => {
    let onDone;
    const sh = new mod.ShellProcess({ cwd: '/tmp', env: { ...process.env, PS1: '', TERM: 'dumb' }, hooks: {
      ready: () => resolve({ run: (t) => new Promise((r) => { onDone = r; sh.run(t); }), end: () => { sh.end(); return sh.gone; } }),
      done: (r) => onDone(r), interrupted: () => undefined, exited: () => undefined,
    } });
  });
}

const rows = [];
console.log('| round | this build | compare | this / compare | load |\n|---|---|---|---|---|');
for (let round = 1; round <= 5; round++) {
  const row = {};
  for (const k of round % 2 ? ['compare', 'this'] : ['this', 'compare']) {
    const s = await shell(mods[k]);
    const t0 = process.hrtime.bigint();
    let n = 0;
    while (Number(process.hrtime.bigint() - t0) < 3e9) { await s.run('echo hi'); n++; }
    row[k] = Math.round(n / (Number(process.hrtime.bigint() - t0) / 1e9));
    await s.end();
  }
  rows.push(row);
  console.log(`| ${round} | ${row.this} | ${row.compare} | ${(100 * row.this / row.compare).toFixed(1)} % | ${loadavg()[0].toFixed(1)} |`);
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`| **median** | **${median(rows.map((r) => r.this))}** | **${median(rows.map((r) => r.compare))}** | **${(100 * median(rows.map((r) => r.this / r.compare))).toFixed(1)} %** | |`);
process.exit(0);
