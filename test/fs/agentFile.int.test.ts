import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openAgentFile, readAgentFile, readAgentFileAsync, writeTargetKind } from '../../src/effects/agentFile.js';
import { tempDir } from '../helpers/daemon.js';

/** behaviour.md §16: the one reader of agent-controlled paths, in isolation. */

const dir = tempDir('loom-agentfile-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'a.md'), 'hello');
chmodSync(join(dir, 'a.md'), 0o640);
mkdirSync(join(dir, 'sub'));
spawnSync('mkfifo', [join(dir, 'p')]);
symlinkSync(join(dir, 'a.md'), join(dir, 'link'));

describe.each([['readAgentFile', async (p: string, l: number) => readAgentFile(p, l)], ['readAgentFileAsync', readAgentFileAsync]])('%s', (_name, read) => {
  it('a regular file within the limit: its bytes and mode; at the limit still read, one byte over refused', async () => {
    expect(await read(join(dir, 'a.md'), 5)).toEqual({ data: Buffer.from('hello'), mode: 0o640 });
    expect(await read(join(dir, 'a.md'), 4)).toEqual({ refused: 'too_large', size: 5 });
  });

  it('absent, a folder, a FIFO, a device, a final symlink: refusals, never a blocking open', async () => {
    expect(await read(join(dir, 'none'), 10)).toEqual({ refused: 'missing' });
    expect(await read(join(dir, 'a.md', 'x'), 10)).toEqual({ refused: 'missing' });
    expect(await read(join(dir, 'sub'), 10)).toEqual({ refused: 'directory' });
    expect(await read(join(dir, 'p'), 10)).toEqual({ refused: 'not_regular' });
    expect(await read('/dev/zero', 10)).toEqual({ refused: 'not_regular' });
    expect(await read(join(dir, 'link'), 10)).toEqual({ refused: 'not_regular' });
  });

  it('a file that holds more than fstat says (a /proc file says 0): read up to the limit, then refused', async () => {
    expect(await read('/proc/self/status', 10)).toEqual({ refused: 'too_large', size: 11 });
    const r = await read('/proc/self/status', 1 << 20);
    expect('data' in r && r.data.toString().startsWith('Name:')).toBe(true);
  });
});

describe('openAgentFile and writeTargetKind', () => {
  it('an open regular file comes with its size; special files are refused', () => {
    const f = openAgentFile(join(dir, 'a.md'));
    expect(f).toMatchObject({ size: 5, mode: 0o640 });
    if ('fd' in f) closeSync(f.fd);
    expect(openAgentFile(join(dir, 'p'))).toEqual({ refused: 'not_regular' });
  });

  it('what stands where a write would go', () => {
    expect(writeTargetKind(join(dir, 'a.md'))).toBe('file');
    expect(writeTargetKind(join(dir, 'none'))).toBe('absent');
    expect(writeTargetKind(join(dir, 'a.md', 'x'))).toBe('absent');
    expect(writeTargetKind(join(dir, 'sub'))).toBe('directory');
    expect(writeTargetKind(join(dir, 'p'))).toBe('other');
  });
});
