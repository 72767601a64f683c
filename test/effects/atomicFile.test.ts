import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../src/effects/atomicFile.js';
import { tempDir } from '../helpers/temp.js';

/** The one atomic writer (effects/atomicFile.ts): registries, env state and log rewrites all go through it. */
describe('writeFileAtomic', () => {
  it('when given a string, then the file holds exactly it with mode 0600 in a 0700 folder made for it, and no temp file stays', () => {
    const dir = join(tempDir(), 'state');
    writeFileAtomic(join(dir, 'a.json'), '{"x":1}\n');
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('{"x":1}\n');
    expect(statSync(join(dir, 'a.json')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  it('when given a writer, then its chunks (strings and buffers) replace the old content in order', () => {
    const dir = tempDir();
    const file = join(dir, 'log.jsonl');
    writeFileSync(file, 'old\n');
    writeFileAtomic(file, (write) => { write('one\n'); write(Buffer.from('two\n')); write('é\n'); });
    expect(readFileSync(file, 'utf8')).toBe('one\ntwo\né\n');
    expect(readdirSync(dir)).toEqual(['log.jsonl']);
  });

  it('when the writer throws half way, then the old file is untouched, the error is the writer\'s, and the temp file is removed', () => {
    const dir = tempDir();
    const file = join(dir, 'log.jsonl');
    writeFileSync(file, 'kept\n');
    expect(() => writeFileAtomic(file, (write) => { write('partial'); throw new Error('source broke'); })).toThrow('source broke');
    expect(readFileSync(file, 'utf8')).toBe('kept\n');
    expect(readdirSync(dir)).toEqual(['log.jsonl']);
  });

  it('when the rename fails (the target is a folder), then the error propagates and the temp file is removed', () => {
    const dir = tempDir();
    const target = join(dir, 'taken');
    writeFileAtomic(join(target, 'inner'), 'x');
    expect(() => writeFileAtomic(target, 'y')).toThrow();
    expect(readdirSync(dir)).toEqual(['taken']);
  });
});
