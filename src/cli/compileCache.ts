import { statSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { dataDir as sharedDataDir } from './common.js';

/** Where the daemon keeps V8's compiled code between starts: inside the data directory. */
export const compileCacheDir = (dataDir: string): string => join(dataDir, 'cache', 'compile');

/**
 * Keep V8's compiled code of the daemon between starts (Node >= 22.1, `module.enableCompileCache`):
 * compiling the bundle is a sizeable part of a cold start, and a warm cache skips it (figures in
 * bench/RESULTS.md). Node 20 has no such API and compiles at every start.
 *
 * The cache lives in the data directory (mode 0700), never in a shared temp folder where another
 * user could plant code for the daemon to run. A cache is never worth a failed start: any error
 * leaves it off. `NODE_DISABLE_COMPILE_CACHE=1` turns it off (Node's own switch).
 */
export function enableCompileCache(): void {
  const enable = (module as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
  if (typeof enable !== 'function') return;
  const dataDir = sharedDataDir();
  try {
    // Only into a data directory that exists: the configuration is checked after this (a bad
    // SVC_PORT exits 2 with nothing created), and the daemon makes the folder itself with mode
    // 0700. The first start of a new data directory compiles as Node 20 does; later ones use the cache.
    if (!statSync(dataDir).isDirectory()) return;
    enable(compileCacheDir(dataDir));
  } catch {
    // Off: the daemon compiles as Node 20 does.
  }
}
