import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readActionFile, readModifierFile, writeActionFile } from '../../src/effects/actionFiles.js';
import type { AgentRecord } from '../../src/domain/ports.js';
import { tempDir } from '../helpers/daemon.js';

function agent(): AgentRecord & { extra: string } {
  const root = realpathSync(tempDir('loom-files-'));
  const home = join(root, 'home');
  const extra = join(root, 'shared');
  mkdirSync(home);
  mkdirSync(extra);
  return { id: 'leo', home, allowedPaths: [extra], createdAt: '', extra };
}

describe('behaviour.md §4.12 to: writes', () => {
  it('when a local document writes a relative path, then it lands in the home, folders created, atomically', () => {
    const a = agent();
    expect(writeActionFile(a, true, 'out/deep/x.bin', Buffer.from([1, 2]))).toBeNull();
    expect(readFileSync(join(a.home, 'out/deep/x.bin'))).toEqual(Buffer.from([1, 2]));
  });

  it('when a local document writes into an allowed path, then it is allowed; outside the workspace it is refused', () => {
    const a = agent();
    expect(writeActionFile(a, true, join(a.extra, 'ok.txt'), Buffer.from('x'))).toBeNull();
    expect(writeActionFile(a, true, '/tmp/loom-nope/x.txt', Buffer.from('x'))).toBe('warning: to: refused: /tmp/loom-nope/x.txt is outside the workspace');
    expect(writeActionFile(a, true, '~/../escape.txt', Buffer.from('x'))).toBe(`warning: to: refused: ${join(a.home, '..', 'escape.txt')} is outside the workspace`);
  });

  it('when a symlink inside the home points outside, then writing through it is refused', () => {
    const a = agent();
    symlinkSync('/tmp', join(a.home, 'tmp-link'));
    expect(writeActionFile(a, true, 'tmp-link/x.txt', Buffer.from('x'))).toBe('warning: to: refused: ~/tmp-link/x.txt is outside the workspace');
  });

  it('when a remote document writes outside the home or under ~/packages, then it is refused', () => {
    const a = agent();
    const text = 'warning: to: refused: remote documents may write only inside the home, outside ~/packages';
    expect(writeActionFile(a, false, join(a.extra, 'x.txt'), Buffer.from('x'))).toBe(text);
    expect(writeActionFile(a, false, '~/packages/app/string.md', Buffer.from('x'))).toBe(text);
    expect(writeActionFile(a, false, 'notes/x.txt', Buffer.from('x'))).toBeNull();
  });

  it('when the target is a FIFO or a folder, then it is refused and left as it was (behaviour.md §16)', () => {
    const a = agent();
    spawnSync('mkfifo', [join(a.home, 'p')]);
    mkdirSync(join(a.home, 'adir'));
    expect(writeActionFile(a, true, 'p', Buffer.from('x'))).toBe('warning: to: write failed: not a regular file');
    expect(writeActionFile(a, true, 'adir', Buffer.from('x'))).toBe('warning: to: write failed: is a directory');
    expect(statSync(join(a.home, 'p')).isFIFO()).toBe(true);
    expect(readActionFile(a, 'p', 10)).toEqual({ ok: false, kind: 'unreadable', display: '~/p', reason: 'not a regular file' });
    expect(readModifierFile(a, 'p', 10)).toEqual({ ok: false, forbidden: false, display: '~/p', reason: 'not a regular file' });
  });

  it('when the write fails, then the warning names the reason', () => {
    const a = agent();
    mkdirSync(join(a.home, 'adir'));
    expect(writeActionFile(a, true, 'adir', Buffer.from('x'))).toMatch(/^warning: to: write failed: /);
  });
});

describe('behaviour.md §4.5 / §5.4 reading files for actions', () => {
  it('when a file is read, then ~ and relative paths resolve against the home', () => {
    const a = agent();
    writeFileSync(join(a.home, 'n.txt'), 'hi');
    expect(readActionFile(a, 'n.txt', 10)).toEqual({ ok: true, data: Buffer.from('hi'), display: '~/n.txt' });
    expect(readActionFile(a, '~/n.txt', 10)).toMatchObject({ ok: true });
    expect(readActionFile(a, 'n.txt', 1)).toEqual({ ok: false, kind: 'tooLarge', display: '~/n.txt', size: 2 });
  });

  it('when a modifier file is too large or missing, then the reason reads as behaviour.md wants', () => {
    const a = agent();
    writeFileSync(join(a.home, 'big'), 'abc');
    expect(readModifierFile(a, 'big', 2)).toEqual({ ok: false, forbidden: false, display: '~/big', reason: 'too large: 3 bytes (limit 2)' });
    expect(readModifierFile(a, 'none', 2)).toEqual({ ok: false, forbidden: false, display: '~/none', reason: 'no such file' });
    expect(readModifierFile(a, '/etc/hostname', 2)).toEqual({ ok: false, forbidden: true, display: '/etc/hostname', reason: '' });
  });
});
