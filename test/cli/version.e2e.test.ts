import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VERSION } from '../../src/version.js';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { loom } from './support.js';

let d: RunningDaemon;
beforeAll(async () => { d = await startDaemon(); });
afterAll(async () => { await d?.kill(); });

describe('behaviour.md §2.13 loom --version, -V, version', () => {
  it.each([['--version'], ['-V'], ['version']])('when %s runs with a daemon up, then the CLI and daemon versions and protocol are printed', async (flag) => {
    const r = await loom(d, [flag]);
    expect(r).toEqual({ code: 0, stdout: `loom ${VERSION} (CLI)\ndaemon: loom ${VERSION} · protocol 0.1 · http://127.0.0.1:${d.port}\n`, stderr: '' });
  });

  it('when no daemon answers, then the CLI version alone, and exit 0', async () => {
    const port = await freePort();
    expect(await loom({ port, dataDir: d.dataDir }, ['--version'])).toEqual({ code: 0, stdout: `loom ${VERSION} (CLI)\ndaemon: not running on port ${port}\n`, stderr: '' });
  });

  it('when --json is given, then {cli, daemon} with daemon null when it does not run', async () => {
    expect(JSON.parse((await loom(d, ['--json', 'version'])).stdout)).toEqual({ cli: VERSION, daemon: { version: VERSION, protocol: '0.1', url: `http://127.0.0.1:${d.port}` } });
    const port = await freePort();
    expect(JSON.parse((await loom({ port, dataDir: d.dataDir }, ['--json', '-V'])).stdout)).toEqual({ cli: VERSION, daemon: null });
  });
});
