import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '../helpers/daemon.js';

jest.setTimeout(120_000);

/**
 * The suite's own leak check (test/setup/globalSetup.js, environment.js, globalTeardown.js): a
 * jest run with this project's set-up fails when a test file leaves something in the temp folder,
 * names the file and what it left, and removes the run's folder either way.
 */
describe('a test run that leaves a temp folder behind fails', () => {
  const dir = tempDir('loom-leakcheck-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const setup = join(process.cwd(), 'test', 'setup');
  writeFileSync(join(dir, 'jest.config.json'), JSON.stringify({
    rootDir: dir,
    cacheDirectory: join(dir, 'cache'),
    testMatch: ['<rootDir>/*.test.cjs'],
    transform: {},
    testEnvironment: join(setup, 'environment.js'),
    globalSetup: join(setup, 'globalSetup.js'),
    globalTeardown: join(setup, 'globalTeardown.js'),
  }));
  const mk = "const { mkdtempSync, rmSync } = require('node:fs'); const { tmpdir } = require('node:os'); const { join } = require('node:path');\n";
  writeFileSync(join(dir, 'leaky.test.cjs'), `${mk}test('leaks', () => { mkdtempSync(join(tmpdir(), 'loom-leak-')); });\n`);
  writeFileSync(join(dir, 'tidy.test.cjs'), `${mk}test('cleans up', () => { rmSync(mkdtempSync(join(tmpdir(), 'loom-tidy-')), { recursive: true }); });\n`);

  function jestRun(pattern: string): Promise<{ code: number | null; stderr: string }> {
    return new Promise((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: join(dir, 'tmp') };
      delete env.LOOM_TEST_TMP;
      mkdirSync(join(dir, 'tmp'), { recursive: true });
      const p = spawn(process.execPath, [join(process.cwd(), 'node_modules', 'jest', 'bin', 'jest.js'), '--config', join(dir, 'jest.config.json'), '--runInBand', pattern], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
      p.on('close', (code) => resolve({ code, stderr }));
    });
  }

  it('names the test file and the folder it left, exits non-zero, and removes the run folder', async () => {
    const r = await jestRun('leaky');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/the test run left 1 entry in its temp folder \(per test file: what is left\):\n {2}leaky-\w{6}: loom-leak-\w{6}\n/);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
  });

  it('passes when every test file cleans up', async () => {
    const r = await jestRun('tidy');
    expect({ code: r.code, leak: /left \d+ entr/.test(r.stderr) }).toEqual({ code: 0, leak: false });
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
  });

  it('this run has its own temp folder per test file', () => {
    expect(tmpdir()).toMatch(/\/loom-jest-\w{6}\/tempLeak-\w{6}$/);
  });
});
