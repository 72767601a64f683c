import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFailure } from '../../src/cli/background.js';
import { shellLocalPath } from '../../src/cli/localPath.js';
import { tempDir } from '../helpers/temp.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('loom-cwd-');
  mkdirSync(join(dir, 'apps/notes'), { recursive: true });
  writeFileSync(join(dir, 'notes.md'), '# N\n');
});
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

describe('which loom install sources are paths of the shell\'s folder', () => {
  it.each([
    ['./x.md', 'x.md'], ['../x.md', '../x.md'], ['.', ''], ['notes.md', 'notes.md'], ['apps/notes', 'apps/notes'],
  ])('when the source is %s, then it is that path of the current folder', (word, rel) => {
    expect(shellLocalPath(word, dir)).toBe(join(dir, rel));
  });

  it.each(['~/notes.md', '~', '/abs/notes.md', 'apps/missing', 'gh:octo/apps', 'https://example.com/notes.md', 'file:notes.md', ''])(
    'when the source is %j, then it goes to the daemon as typed', (word) => {
      expect(shellLocalPath(word, dir)).toBeNull();
    },
  );
});

describe('why the daemon did not start (loom start)', () => {
  it('when the daemon wrote its reason after a stack trace, then the loom: line is the reason; only what this start appended counts', () => {
    const log = join(dir, 'loom.log');
    writeFileSync(log, 'loom: an older failure\n');
    const from = 23;
    appendFileSync(log, 'loom: port 3930 is in use\nError: something\n    at x (y.js:1:1)\n');
    expect(startFailure(log, from)).toBe('port 3930 is in use');
    expect(startFailure(log, 23 + 'loom: port 3930 is in use\n'.length)).toBe('at x (y.js:1:1)');
    expect(startFailure(join(dir, 'absent.log'), 0)).toBeNull();
    writeFileSync(log, 'x'.repeat(100));
    expect(startFailure(log, 100)).toBeNull();
  });
});
