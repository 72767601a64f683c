import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A fresh temp folder, removed when the test file ends (after its afterAll hooks, by
 * test/setup/environment.js): tests need not clean up what this makes, and nothing is left in /tmp.
 * Kept apart from the daemon launcher (helpers/daemon.ts) so that unit tests can use it.
 */
export function tempDir(prefix = 'loom-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  (globalThis as { __loomTempDirs?: string[] }).__loomTempDirs?.push(dir);
  return dir;
}
