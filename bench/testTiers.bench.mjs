#!/usr/bin/env node
// The unit tier's wall time (README "Tests": `npm run test:unit` is what a contributor runs while
// editing; the target is under 30 s). Runs the unit project three times and reports wall and CPU
// time; the CPU time (user + system of jest and its worker) is the work itself, whatever the load.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { median, root, writeResult } from './common.mjs';

const RUNS = 3;

/** CPU seconds of the children this process has waited for (Linux /proc; jest waits for its workers). */
function childCpuS() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  // Fields 16 and 17 of stat (cutime, cstime), counted from the state field (3rd) here, in clock ticks.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const env = { ...process.env, NODE_OPTIONS: '--experimental-vm-modules --disable-warning=ExperimentalWarning' };
const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const load = loadavg().map((l) => l.toFixed(2)).join(', ');
const runs = [];
for (let i = 0; i < RUNS; i++) {
  const cpu0 = childCpuS();
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [jest, '--selectProjects', 'unit', '--silent'], { cwd: root, env, encoding: 'utf8' });
  const wallS = (performance.now() - t0) / 1000;
  if (r.status !== 0) { console.error(r.stderr); process.exit(1); }
  const tests = /Tests:\s+(\d+) passed/.exec(r.stderr)?.[1] ?? '?';
  const files = /Test Suites:\s+(\d+) passed/.exec(r.stderr)?.[1] ?? '?';
  runs.push({ wallS, cpuS: childCpuS() - cpu0, tests, files });
}

const row = (r, i) => `| ${i + 1} | ${r.files} | ${r.tests} | ${r.wallS.toFixed(1)} s | ${r.cpuS.toFixed(1)} s |`;
writeResult('testTiers', 'Tests: the unit tier (`npm run test:unit`)', `
Target: under 30 s wall. Load average when the run started: ${load} (on a shared machine other work
inflates the wall time; the CPU time, jest's and its worker's, is the work itself, and what the wall
time comes close to on an idle machine of this kind). Jest's transform cache is warm (a first run after \`jest --clearCache\`
also compiles every file).

| Run | Files | Tests | Wall | CPU (user + system) |
|---|---|---|---|---|
${runs.map(row).join('\n')}

Median wall: ${median(runs.map((r) => r.wallS)).toFixed(1)} s; median CPU: ${median(runs.map((r) => r.cpuS)).toFixed(1)} s.
`);
