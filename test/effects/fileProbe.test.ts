import { describe, expect, it } from '@jest/globals';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAbsent } from '../../src/effects/fileProbe.js';
import { readFileIfExists } from '../../src/effects/atomicFile.js';
import { tempDir } from '../helpers/temp.js';

describe('isAbsent: the start-up probe that builds no exception', () => {
  it('is true only for a missing path (and a dangling link, which an open would find missing too)', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    mkdirSync(join(dir, 'd'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    expect(isAbsent(join(dir, 'missing'))).toBe(true);
    expect(isAbsent(join(dir, 'dangling'))).toBe(true);
    expect(isAbsent(join(dir, 'f'))).toBe(false);
    expect(isAbsent(join(dir, 'd'))).toBe(false);
  });

  it('still throws for anything but ENOENT, so callers keep telling a file in the way from a missing one', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    expect(() => isAbsent(join(dir, 'f', 'below'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    expect(readFileIfExists(join(dir, 'missing'))).toBeUndefined();
    expect(() => readFileIfExists(join(dir, 'f', 'below'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });
});

describe('isAbsent deeper down', () => {
  it('a path under a missing folder is absent; under a file further up it is ENOTDIR on every Node line', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    expect(isAbsent(join(dir, 'no', 'such', 'thing'))).toBe(true);
    expect(() => isAbsent(join(dir, 'f', 'a', 'b'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });
});
