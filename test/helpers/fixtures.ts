import { chmodSync, cpSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The real action documents the tests and benchmarks use, inside the repository (copied from the
 * shared corpus with its licence notice, test/fixtures/LICENSE-NOTICE.md), so any clone passes
 * `npm test` as any user.
 */
export const FIXTURE_APPS = join(process.cwd(), 'test', 'fixtures', 'apps');

/**
 * Copy a fixture tree to `dest` and make the copy writable by its owner: a source checked out or
 * copied read-only (as the shared corpus is) must not make tests that rewrite their copy fail with
 * EACCES when they run as an ordinary user.
 */
export function copyWritable(src: string, dest: string): void {
  cpSync(src, dest, { recursive: true });
  makeWritable(dest);
}

function makeWritable(p: string): void {
  const st = statSync(p);
  chmodSync(p, st.mode | (st.isDirectory() ? 0o700 : 0o600));
  if (st.isDirectory()) for (const name of readdirSync(p)) makeWritable(join(p, name));
}
