import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FsRefusal } from '../../src/domain/fsPlane.js';
import { fsOperations } from '../../src/effects/fsPlane.js';
import { commitTemp, createTemp, openFileAt, release, verifyDir, walk } from '../../src/effects/fsResolver.js';
import { tempDir } from '../helpers/daemon.js';

/** A home with sub/f ("inside"), file.txt, and an outside folder with secret ("OUTSIDE"). */
function world() {
  const root = tempDir('loom-resolver-');
  const home = join(root, 'home');
  const outside = join(root, 'outside');
  mkdirSync(join(home, 'sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(home, 'sub', 'f'), 'inside');
  writeFileSync(join(home, 'file.txt'), 'plain');
  writeFileSync(join(outside, 'f'), 'OUTSIDE');
  return { home, outside };
}

const refusal = (kind: string) => expect.objectContaining({ kind });

describe('fs resolver primitives (docs/fs-resolver.md)', () => {
  it('when a symlink is in the middle of the path, then the walk refuses it without opening its target', async () => {
    const { home, outside } = world();
    symlinkSync(outside, join(home, 'link'));
    await expect(walk(home, ['link'], false)).rejects.toEqual(refusal('symlink'));
    await expect(walk(home, ['link', 'deeper'], true)).rejects.toEqual(refusal('symlink'));
    expect(readdirSync(outside)).toEqual(['f']);
  });

  it('when a file is in the middle of the path, then the walk refuses with not_a_directory', async () => {
    const { home } = world();
    await expect(walk(home, ['file.txt'], false)).rejects.toEqual(refusal('not_a_directory'));
  });

  it('when folders are missing, then the walk returns null, or creates them when asked', async () => {
    const { home } = world();
    expect(await walk(home, ['a', 'b'], false)).toBeNull();
    const held = await walk(home, ['a', 'b'], true);
    expect(held?.path).toBe(join(home, 'a', 'b'));
    held?.close();
    expect(readdirSync(join(home, 'a'))).toEqual(['b']);
  });

  it('when the final component is a symlink, then opening it is refused', async () => {
    const { home, outside } = world();
    symlinkSync(join(outside, 'f'), join(home, 'sub', 'evil'));
    await expect(fsOperations.openForRead(home, ['sub', 'evil'])).rejects.toEqual(refusal('symlink'));
  });

  it('when a held folder is swapped for a symlink to the outside after the walk, then the read is refused and nothing outside is read', async () => {
    const { home, outside } = world();
    const held = await walk(home, ['sub'], false);
    if (!held) throw new Error('walk failed');
    renameSync(join(home, 'sub'), join(home, 'sub.stash'));
    symlinkSync(outside, join(home, 'sub'));
    expect(() => verifyDir(held)).toThrow(FsRefusal);
    expect(() => openFileAt(held, 'f')).toThrow(FsRefusal);
    held.close();
  });

  it('when a held folder is swapped before a PUT creates its temp file, then nothing is created anywhere', async () => {
    const { home, outside } = world();
    const held = await walk(home, ['sub'], false);
    if (!held) throw new Error('walk failed');
    renameSync(join(home, 'sub'), join(home, 'sub.stash'));
    symlinkSync(outside, join(home, 'sub'));
    await expect(createTemp(held)).rejects.toEqual(refusal('symlink'));
    held.close();
    expect(readdirSync(outside)).toEqual(['f']);
    expect(readdirSync(join(home, 'sub.stash'))).toEqual(['f']);
  });

  it('when a held folder is swapped between upload and rename, then the temp file is removed and the rename refused', async () => {
    const { home, outside } = world();
    const held = await walk(home, ['sub'], false);
    if (!held) throw new Error('walk failed');
    const temp = await createTemp(held);
    release(temp.fd);
    renameSync(join(home, 'sub'), join(home, 'sub.stash'));
    symlinkSync(outside, join(home, 'sub'));
    await expect(commitTemp(held, temp.name, 'f')).rejects.toEqual(refusal('symlink'));
    held.close();
    expect(readdirSync(join(home, 'sub.stash'))).toEqual(['f']);
    expect(readFileSync(join(outside, 'f'), 'utf8')).toBe('OUTSIDE');
  });

  it('when a held folder is removed during the request, then the PUT is refused (403), not an internal error', async () => {
    const { home } = world();
    mkdirSync(join(home, 'gone'));
    const held = await walk(home, ['gone'], false);
    if (!held) throw new Error('walk failed');
    rmdirSync(join(home, 'gone'));
    await expect(createTemp(held)).rejects.toEqual(refusal('symlink'));
    held.close();
  });

  it('when the target is a FIFO, then it is refused as not regular without hanging', async () => {
    const { home } = world();
    execFileSync('mkfifo', [join(home, 'sub', 'pipe')]);
    await expect(fsOperations.openForRead(home, ['sub', 'pipe'])).rejects.toEqual(refusal('not_regular'));
  });

  it('when a PUT replaces a file, then the rename happens inside the held folder and no temp file remains', async () => {
    const { home } = world();
    const r = await fsOperations.putFile(home, ['sub', 'f'], async (sink) => {
      await new Promise<void>((resolve, reject) => sink.write(Buffer.from('new'), (err) => (err ? reject(err) : resolve())));
      return 3;
    });
    expect(r).toEqual({ created: false, size: 3 });
    expect(readFileSync(join(home, 'sub', 'f'), 'utf8')).toBe('new');
    expect(readdirSync(join(home, 'sub'))).toEqual(['f']);
  });

  it('when the pump fails, then the temp file is removed and the target is unchanged', async () => {
    const { home } = world();
    await expect(fsOperations.putFile(home, ['sub', 'f'], async () => { throw new Error('client gone'); })).rejects.toThrow('client gone');
    expect(readFileSync(join(home, 'sub', 'f'), 'utf8')).toBe('inside');
    expect(readdirSync(join(home, 'sub'))).toEqual(['f']);
  });
});
