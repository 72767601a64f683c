import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileCacheDir } from '../../src/cli/compileCache.js';
import { DAEMON_RUNTIME_V8_FLAGS, YOUNG_GENERATION_BYTES, runtimeV8Flags } from '../../src/effects/heapTuning.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';

const built = pathToFileURL(join(process.cwd(), 'dist', 'effects', 'heapTuning.js')).href;

// A heap that keeps a fixed live set while generations of objects live long enough to be promoted
// and then die: the old generation fills with garbage, and its peak size says how long V8 let it grow.
const workload = (tune: boolean): string => `
  import v8 from 'node:v8';
  const { tuneHeapAfterStart } = await import(${JSON.stringify(built)});
  const set = ${tune} ? tuneHeapAfterStart() : false;
  const live = [];
  for (let i = 0; i < 200000; i++) live.push({ i, s: 'v' + i });
  let ring = new Array(50000);
  let peak = 0;
  for (let r = 0; r < 60; r++) {
    for (let i = 0; i < 50000; i++) ring[i] = { r, i, a: [i, r], s: 'x' + i };
    peak = Math.max(peak, v8.getHeapStatistics().total_heap_size);
    if (r % 3 === 0) ring = new Array(50000);
  }
  console.log(JSON.stringify({ set, peak, live: live.length }));
`;

// Many small allocations, a share of which survive a while, with a turn of the event loop between
// batches as between requests: V8 grows the young generation step by step, and the observer that
// holds it hears of each collection in the next turn. Tuned through the daemon's own call.
const youngWorkload = (tune: boolean): string => `
  const { tuneHeapAfterStart, youngGenerationBytes } = await import(${JSON.stringify(built)});
  if (${tune} && !tuneHeapAfterStart()) throw new Error('not tuned');
  let keep = [];
  let peak = 0;
  for (let r = 0; r < 400; r++) {
    for (let i = 0; i < 5000; i++) keep.push({ i, s: 'x' + i });
    if (keep.length > 500000) keep = [];
    await new Promise((res) => setImmediate(res));
    peak = Math.max(peak, youngGenerationBytes());
  }
  console.log(JSON.stringify({ peak, kept: keep.length }));
`;

// A short burst (as of registrations) that promotes objects which then die, with no more than one
// full collection, then the daemon goes quiet: the heap V8 committed at the end of the burst, and
// what it holds after a quiet spell.
const burstWorkload = (tune: boolean): string => `
  import v8 from 'node:v8';
  const { tuneHeapAfterStart } = await import(${JSON.stringify(built)});
  if (${tune} && !tuneHeapAfterStart()) throw new Error('not tuned');
  let keep = [];
  for (let r = 0; r < 100; r++) {
    for (let i = 0; i < 2000; i++) keep.push({ i, s: 'x' + i, a: [r] });
    if (keep.length > 60000) keep = [];
    await new Promise((res) => setImmediate(res));
  }
  keep = [];
  const burst = v8.getHeapStatistics().total_heap_size;
  await new Promise((res) => setTimeout(res, 2500));
  console.log(JSON.stringify({ burst, quiet: v8.getHeapStatistics().total_heap_size }));
`;

function run(script: string): Record<string, number | boolean> {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as Record<string, number | boolean>;
}
const peakOf = (tune: boolean) => run(workload(tune)) as { set: boolean; peak: number };

describe('the daemon tunes its heap once it is ready', () => {
  it('sets the heap-growing flag on Node 20 and 22 (not on Node 24, whose V8 holds no more memory without it) and turns Maglev off on Node 22 and later', () => {
    expect(runtimeV8Flags(20)).toEqual(['--heap-growing-percent=50']);
    expect(runtimeV8Flags(22)).toEqual(['--heap-growing-percent=50', '--no-maglev']);
    expect(runtimeV8Flags(24)).toEqual(['--no-maglev']);
  });


  const tunes = DAEMON_RUNTIME_V8_FLAGS.some((f) => f.startsWith('--heap-growing-percent'));
  (tunes ? it : it.skip)(`when the flags are set at run time, then the old generation is collected long before it reaches the untuned peak (skipped on Node 24: no heap-growing flag)`, () => {
    const untuned = peakOf(false);
    const tuned = peakOf(true);
    expect(tuned.set).toBe(true);
    // Untuned, V8 lets this heap grow to about twice the tuned peak.
    expect(tuned.peak).toBeLessThan(untuned.peak * 0.75);
  });

  it('when it holds the young generation, then a burst leaves it at the held size, where V8 alone grows it several times larger', () => {
    const free = run(youngWorkload(false)).peak as number;
    const held = run(youngWorkload(true)).peak as number;
    // Unheld, V8 grows it to 32 MiB (Node 20 and 22) or 128 MiB (Node 24, sized from the machine).
    expect(free).toBeGreaterThan(YOUNG_GENERATION_BYTES * 2);
    // Node 20 and 22 stop at the held size; Node 24's V8 still adds a page at a time, which it gives back.
    expect(held).toBeLessThanOrEqual(Number(process.versions.node.split('.')[0]) < 24 ? YOUNG_GENERATION_BYTES : free / 2);
  });

  const reduces = Number(process.versions.node.split('.')[0]) >= 22;
  (reduces ? it : it.skip)('when a burst is over, then a quiet spell gives back most of the heap it left committed, which V8 alone keeps (skipped on Node 20: its V8 cannot reduce on request)', () => {
    const alone = run(burstWorkload(false)) as { burst: number; quiet: number };
    const tuned = run(burstWorkload(true)) as { burst: number; quiet: number };
    // V8 alone never reaches a full collection here: what the burst committed stays committed.
    expect(alone.quiet).toBeGreaterThan(alone.burst * 0.9);
    expect(tuned.quiet).toBeLessThan(tuned.burst * 0.6);
  });

  it('tells V8\'s full collections from its scavenges in the gc entries the reducer counts', () => {
    const reducerModule = pathToFileURL(join(process.cwd(), 'dist', 'effects', 'memoryReducer.js')).href;
    const script = `
      import { PerformanceObserver } from 'node:perf_hooks';
      const { isFullCollection } = await import(${JSON.stringify(reducerModule)});
      const seen = [];
      const obs = new PerformanceObserver((list) => { for (const e of list.getEntries()) seen.push(isFullCollection(e)); });
      obs.observe({ entryTypes: ['gc'] });
      globalThis.gc({ type: 'minor' });
      await new Promise((res) => setTimeout(res, 50));
      const minor = seen.splice(0);
      globalThis.gc();
      await new Promise((res) => setTimeout(res, 50));
      obs.disconnect();
      console.log(JSON.stringify({ minor, full: seen }));
    `;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const { minor, full } = JSON.parse(r.stdout) as { minor: boolean[]; full: boolean[] };
    expect(minor.length).toBeGreaterThan(0);
    expect(minor.every((f) => !f)).toBe(true);
    expect(full).toContain(true);
  });

  const flush = typeof (module as { flushCompileCache?: unknown }).flushCompileCache === 'function';
  let d: RunningDaemon | undefined;
  afterAll(async () => { await d?.stop(); });

  // Flags change the hash V8 stamps on compiled code: the cache must be on disk before they change,
  // or every later start would refuse it.
  (flush ? it : it.skip)('writes the compile cache before it changes a flag, while it runs (skipped below Node 22.10, without module.flushCompileCache)', async () => {
    d = await startDaemon();
    expect((await fetch(`${d.base}/health`)).status).toBe(200);
    const dir = compileCacheDir(d.dataDir);
    expect(readdirSync(dir).some((v) => readdirSync(join(dir, v)).length > 0)).toBe(true);
  });
});
