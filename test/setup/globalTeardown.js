// Runs once after every test file: fails the run when its private temp folder (globalSetup.js) is not
// empty, naming what each test file left (environment.js gives each file its own folder), then removes
// the folder so a failed run does not pile up in /tmp either.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export default function globalTeardown() {
  const root = process.env.LOOM_TEST_TMP;
  if (!root) return;
  const left = [];
  for (const entry of readdirSync(root)) {
    let inside = [];
    try {
      inside = readdirSync(join(root, entry));
    } catch {
      // A file, not a test file's folder: report it as it is.
    }
    left.push(inside.length > 0 ? `${entry}: ${inside.join(', ')}` : entry);
  }
  rmSync(root, { recursive: true, force: true });
  if (left.length > 0) {
    throw new Error(`the test run left ${left.length} ${left.length === 1 ? 'entry' : 'entries'} in its temp folder (per test file: what is left):\n  ${left.join('\n  ')}`);
  }
}
