import { describe, expect, it, beforeAll } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseDocument, warningLine } from '../../src/sfmd/parse.js';
import { tempDir } from '../helpers/temp.js';
import { copyWritable, FIXTURE_APPS } from '../helpers/fixtures.js';

/** The real documents: the repository's copy (test/fixtures/apps); the test works on a copy of it. */
const CORPUS = FIXTURE_APPS;
const golden = JSON.parse(readFileSync(join(process.cwd(), 'test/documents/corpus-golden.json'), 'utf8')) as {
  files: Record<string, { actions: string[]; warnings: Array<{ warning: string; why: string }> }>;
};

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? markdownFiles(p) : n.endsWith('.md') ? [p] : [];
  });
}

let copy: string;
let files: string[];
beforeAll(() => {
  copy = tempDir('loom-corpus-');
  copyWritable(CORPUS, copy);
  files = markdownFiles(copy).sort();
});

describe('parseDocument over the real documents of the corpus', () => {
  it('when every Markdown file is parsed, then none crashes and every file is in the golden list', () => {
    const names = files.map((f) => relative(copy, f));
    expect(names).toEqual(Object.keys(golden.files).sort());
    for (const f of files) expect(() => parseDocument(readFileSync(f, 'utf8'))).not.toThrow();
  });

  it('when a file is parsed, then its action ids and types match the golden list', () => {
    for (const f of files) {
      const doc = parseDocument(readFileSync(f, 'utf8'));
      const got = doc.actions.map((a) => `${a.id}:${a.kind === 'cli' ? 'CLI' : a.method}`);
      expect({ file: relative(copy, f), actions: got }).toEqual({ file: relative(copy, f), actions: golden.files[relative(copy, f)].actions });
    }
  });

  it('when a file is parsed, then its warnings are exactly the golden ones (each one an author would agree with)', () => {
    let total = 0;
    for (const f of files) {
      const doc = parseDocument(readFileSync(f, 'utf8'));
      const want = golden.files[relative(copy, f)].warnings.map((w) => w.warning);
      expect({ file: relative(copy, f), warnings: doc.warnings.map(warningLine) }).toEqual({ file: relative(copy, f), warnings: want });
      total += doc.warnings.length;
    }
    expect(total).toBe(2);
  });

  it('when the corpus is parsed, then it holds 74 files and 205 actions', () => {
    const n = files.reduce((s, f) => s + parseDocument(readFileSync(f, 'utf8')).actions.length, 0);
    expect(files.length).toBe(74);
    expect(n).toBe(205);
  });
});
