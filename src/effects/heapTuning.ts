import module from 'node:module';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { gcExtension, isFullCollection, MemoryReducer } from './memoryReducer.js';

/**
 * V8 flags the daemon sets on itself once it is ready, rather than on its command line, for the Node
 * line it runs on.
 *
 * `--heap-growing-percent=50`: after each full collection V8 lets the old generation grow to 1.5 times
 * what survived before it collects again. Left to itself, the V8 of Node 20 and 22 lets a small heap
 * grow to several times its live size, so a burst of registrations and sessions left the daemon
 * holding garbage it would only collect much later. Node 24's V8 holds no more memory without it,
 * and there the extra full collections cost server CPU per request, so it is not set there
 * (docs/decisions/0015, bench/RESULTS.md).
 *
 * `--no-maglev` (Node 22 and later, whose V8 has the Maglev tier on): Maglev compiles warm functions
 * on V8's worker threads, and the memory each job frees stays resident in those threads' malloc
 * arenas, so a burst of requests left the daemon holding it for good; Turbofan still optimizes the
 * hot functions (docs/decisions/0022).
 *
 * Why at run time: V8 reads this flag at each collection, so setting it late works, while any flag on
 * the command line makes Node 20 and 22 refuse the code cache of Node's own modules, which they then
 * compile at every start.
 */
export const runtimeV8Flags = (nodeMajor: number): readonly string[] => [
  ...(nodeMajor < 24 ? ['--heap-growing-percent=50'] : []),
  ...(nodeMajor >= 22 ? ['--no-maglev'] : []),
];

/** {@link runtimeV8Flags} of the Node running this process. */
export const DAEMON_RUNTIME_V8_FLAGS: readonly string[] = runtimeV8Flags(Number(process.versions.node.split('.')[0]));

/**
 * The size V8's young generation is held at: two semi-spaces of 4 MiB. What survives the daemon's
 * requests is small, so a young generation of this size collects it as well as a larger one (more but
 * shorter scavenges), while V8 on its own grows it to 32 MiB (Node 20) or more (Node 22 and 24 size
 * it from the machine's memory) under a burst and keeps it grown and resident while idle.
 */
export const YOUNG_GENERATION_BYTES = 8 * 1024 * 1024;

/** V8's own `--semi-space-growth-factor`: each growth of the young generation doubles it. */
const V8_GROWTH_FACTOR = 2;

/** Bytes V8 has reserved for the young generation now (both semi-spaces). */
export const youngGenerationBytes = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

/**
 * Hold V8's young generation at about {@link YOUNG_GENERATION_BYTES} from now on: after each
 * collection, once it has grown to that size V8 may not grow it further (`--semi-space-growth-factor=1`); when V8 has shrunk it (it does
 * so when the daemon idles) it may grow again, with V8's own factor, up to the same size.
 *
 * Why not `--max-semi-space-size` on the command line, which caps it outright: any flag there makes
 * Node 20 and 22 compile Node's own modules at every start, and every way of starting the daemon
 * would have to pass it. V8 reads the growth factor each time it grows the young generation, so
 * setting it at run time works; the collection that grows it runs before this hears of it, so the
 * size can pass the held size by one growth step until V8 next shrinks it. Returns the check to
 * run after each collection V8 reports.
 */
function holdYoungGeneration(): () => void {
  let holding = false;
  const check = (): void => {
    const hold = youngGenerationBytes() >= YOUNG_GENERATION_BYTES;
    if (hold === holding) return;
    holding = hold;
    setFlagsFromString(`--semi-space-growth-factor=${hold ? 1 : V8_GROWTH_FACTOR}`);
  };
  check();
  return check;
}

interface CompileCacheApi {
  getCompileCacheDir?: () => string | undefined;
  flushCompileCache?: () => void;
}

/**
 * Tune this process's heap; call it once start-up has loaded its modules: set
 * {@link DAEMON_RUNTIME_V8_FLAGS}, hold the young generation ({@link holdYoungGeneration}) and,
 * where V8 can, give back what a burst left committed once it is over ({@link MemoryReducer}).
 *
 * Changing a flag changes the hash V8 stamps on compiled code, so the compile cache (Node >= 22.1)
 * is written out first, with the hash the next start will compare it against; without that, a cache
 * written at exit would be refused at every later start. When a cache is on and this Node cannot
 * write it early, the heap is left as V8 sizes it: a warm start is worth more than the memory.
 * Returns whether it tuned the heap.
 */
export function tuneHeapAfterStart(): boolean {
  const cache = module as CompileCacheApi;
  if (cache.getCompileCacheDir?.()) {
    if (typeof cache.flushCompileCache !== 'function') return false;
    cache.flushCompileCache();
  }
  for (const flag of DAEMON_RUNTIME_V8_FLAGS) setFlagsFromString(flag);
  const gc = gcExtension(Number(process.versions.node.split('.')[0]));
  const onCollection: Array<(fullAt: readonly number[]) => void> = [holdYoungGeneration(), ...(gc ? [new MemoryReducer(gc).collected] : [])];
  new PerformanceObserver((list) => {
    const fullAt = list.getEntries().filter(isFullCollection).map((e) => e.startTime);
    for (const f of onCollection) f(fullAt);
  }).observe({ entryTypes: ['gc'] });
  return true;
}
