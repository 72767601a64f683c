import { beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { compileCacheDir } from '../../src/cli/compileCache.js';
import { runCli, startDaemon, tempDir } from '../helpers/daemon.js';

/** Cold start: V8's compiled code kept between starts where Node has the API (>= 22.1). */
const supported = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

describe('the compile cache of `loom daemon`', () => {
  let dir = '';
  let exitCode: number | null = null;
  beforeAll(async () => {
    const d = await startDaemon();
    exitCode = await d.stop();
    dir = compileCacheDir(d.dataDir);
  });

  it(`${supported ? 'is' : 'is not'} kept in <data>/cache/compile on Node ${process.versions.node}, never outside the data directory`, () => {
    expect(exitCode).toBe(0);
    expect(existsSync(dir)).toBe(supported);
  });

  // Node writes the cache on exit: one folder per Node version, holding compiled modules.
  (supported ? it : it.skip)('holds compiled modules after a stop (skipped below Node 22.1: no module.enableCompileCache)', () => {
    expect(readdirSync(dir).some((v) => readdirSync(join(dir, v)).length > 0)).toBe(true);
  });

  it('when the cache folder cannot be made (a file in the way), then the daemon starts all the same', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'cache'), 'not a folder');
    const d = await startDaemon({ dataDir });
    expect((await fetch(`${d.base}/health`)).status).toBe(200);
    expect(await d.stop()).toBe(0);
  });

  it('when the configuration is refused (exit 2), then no data directory is created for the cache', async () => {
    const dataDir = join(tempDir(), 'never-made');
    const r = await runCli(['daemon'], { SVC_DATA_DIR: dataDir, SVC_PORT: 'abc' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('loom: invalid SVC_PORT "abc"\n');
    expect(existsSync(dataDir)).toBe(false);
  });
});
