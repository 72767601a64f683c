// The test environment of every test file: Node's, plus a temp folder of its own inside the run's
// (globalSetup.js). TMPDIR points there while the file runs. Folders made by test/helpers tempDir()
// are removed when the file ends, after its afterAll hooks (daemons are stopped by then); the file's
// folder is then removed when empty, else left for globalTeardown.js to report.
import { mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { TestEnvironment } from 'jest-environment-node';

export default class LoomTestEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async setup() {
    await super.setup();
    this.global.__loomTempDirs = [];
    const root = process.env.LOOM_TEST_TMP;
    if (!root) return;
    // Short names: the folders nest inside it (paths stay well below socket-path limits).
    const name = basename(this.testPath).replace(/(\.(int|e2e))?\.test\.[cm]?[jt]s$/, '').slice(0, 24);
    this.dir = mkdtempSync(join(root, `${name}-`));
    this.previousTmp = process.env.TMPDIR;
    process.env.TMPDIR = this.dir;
    this.global.process.env.TMPDIR = this.dir;
  }

  async teardown() {
    for (const dir of this.global.__loomTempDirs ?? []) rmSync(dir, { recursive: true, force: true });
    if (this.dir) {
      process.env.TMPDIR = this.previousTmp;
      try {
        rmdirSync(this.dir);
      } catch {
        // Not empty: the test file left something; globalTeardown.js names it.
      }
    }
    await super.teardown();
  }
}
