// Runs once before the test files (jest globalSetup): the run gets a private temp folder, and every
// temp folder a test makes goes inside it (TMPDIR, which os.tmpdir() and child processes read), so
// globalTeardown.js can tell exactly what the run left behind.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function globalSetup() {
  const root = mkdtempSync(join(tmpdir(), 'loom-jest-'));
  process.env.LOOM_TEST_TMP = root;
  process.env.TMPDIR = root;
}
