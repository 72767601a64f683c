import module from 'node:module';
import { setFlagsFromString } from 'node:v8';

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
 * Why at run time: V8 reads this flag at each collection, so setting it late works, while any flag on
 * the command line makes Node 20 and 22 refuse the code cache of Node's own modules, which they then
 * compile at every start.
 */
export const runtimeV8Flags = (nodeMajor: number): readonly string[] => (nodeMajor < 24 ? ['--heap-growing-percent=50'] : []);

/** {@link runtimeV8Flags} of the Node running this process. */
export const DAEMON_RUNTIME_V8_FLAGS: readonly string[] = runtimeV8Flags(Number(process.versions.node.split('.')[0]));

interface CompileCacheApi {
  getCompileCacheDir?: () => string | undefined;
  flushCompileCache?: () => void;
}

/**
 * Set {@link DAEMON_RUNTIME_V8_FLAGS} in this process; call it once start-up has loaded its modules.
 *
 * Changing a flag changes the hash V8 stamps on compiled code, so the compile cache (Node >= 22.1)
 * is written out first, with the hash the next start will compare it against; without that, a cache
 * written at exit would be refused at every later start. When a cache is on and this Node cannot
 * write it early, the flags are left unset: a warm start is worth more than the memory. Returns
 * whether any flag was set.
 */
export function tuneHeapAfterStart(): boolean {
  if (DAEMON_RUNTIME_V8_FLAGS.length === 0) return false;
  const cache = module as CompileCacheApi;
  if (cache.getCompileCacheDir?.()) {
    if (typeof cache.flushCompileCache !== 'function') return false;
    cache.flushCompileCache();
  }
  for (const flag of DAEMON_RUNTIME_V8_FLAGS) setFlagsFromString(flag);
  return true;
}
