import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { docsApp, type DocsApp } from './helpers.js';

let d: DocsApp;
let n = 0;
let topic: string;
/** A fresh folder per test under the home. */
let dir: string;
let rel: string;
beforeAll(async () => { d = await docsApp(); });
afterAll(async () => { await d.close(); });
beforeEach(() => {
  topic = `f${++n}`;
  rel = `w${n}`;
  dir = join(d.home, rel);
  mkdirSync(dir, { recursive: true });
});
const read = (f: string) => readFileSync(join(dir, f), 'utf8');

describe('/ls (behaviour.md §2.5)', () => {
  it('when a folder is listed, then folders, files and symlinks come in code-point order; dot entries only with --all', async () => {
    for (const f of ['b.md', 'A.md', '.hidden']) writeFileSync(join(dir, f), 'x');
    mkdirSync(join(dir, 'sub'));
    mkdirSync(join(dir, '.git'));
    symlinkSync(join(dir, 'b.md'), join(dir, 'link'));
    expect((await d.run(topic, `/ls ~/${rel}`)).body).toBe(`Listing ~/${rel}/\n---\n  sub/\n  A.md\n  b.md\n  link@`);
    expect((await d.run(topic, `/ls --all ~/${rel}`)).body).toBe(`Listing ~/${rel}/\n---\n  .git/\n  sub/\n  .hidden\n  A.md\n  b.md\n  link@`);
  });
  it('when no path is given, then the base directory is listed; an empty folder says (empty)', async () => {
    mkdirSync(join(dir, 'e'));
    await d.run(topic, `/open ~/${rel}/e`);
    expect((await d.run(topic, '/ls')).body).toBe(`Listing ~/${rel}/e/\n---\n  (empty)`);
  });
  it('when a folder holds more than 500 entries, then 500 show and the rest are counted', async () => {
    for (let i = 0; i < 503; i++) writeFileSync(join(dir, `f${String(i).padStart(3, '0')}`), '');
    const lines = (await d.run(topic, `/ls ~/${rel}`)).body.split('\n');
    expect(lines.length).toBe(2 + 500 + 1);
    expect(lines[lines.length - 1]).toBe('  … 3 more');
  });
  it('when the path is missing, a file, or outside, then NOT_FOUND, INVALID_PATH or FORBIDDEN', async () => {
    writeFileSync(join(dir, 'x.md'), 'x');
    expect((await d.run(topic, `/ls ~/${rel}/none`)).body).toBe(`ERROR(NOT_FOUND): Not found: ~/${rel}/none`);
    expect((await d.run(topic, `/ls ~/${rel}/x.md`)).body).toBe(`ERROR(INVALID_PATH): Not a directory: ~/${rel}/x.md`);
    expect((await d.run(topic, '/ls /etc')).body).toBe('ERROR(FORBIDDEN): Path outside the workspace: /etc');
    expect((await d.run(topic, '/ls a b')).body).toBe('ERROR(INVALID_ARGS): Usage: /ls [--all] [<path>]');
  });
});

describe('/edit (behaviour.md §2.5)', () => {
  it('when a file is viewed, then lines are numbered, right-aligned to the widest number', async () => {
    writeFileSync(join(dir, 'x.md'), Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join('\n') + '\n');
    const r = await d.run(topic, `/edit ~/${rel}/x.md`);
    expect(r.body.split('\n').slice(0, 4)).toEqual([`~/${rel}/x.md (10 lines)`, '---', ' 1 | l1', ' 2 | l2']);
    expect(r.body.split('\n').pop()).toBe('10 | l10');
  });
  it('when --lines is given, then only that range shows; a range past the end is refused', async () => {
    writeFileSync(join(dir, 'x.md'), 'a\nb\nc\n');
    expect((await d.run(topic, `/edit ~/${rel}/x.md --lines 2-3`)).body).toBe(`~/${rel}/x.md (lines 2-3 of 3)\n---\n2 | b\n3 | c`);
    expect((await d.run(topic, `/edit ~/${rel}/x.md --lines 5-9`)).body).toBe(`ERROR(INVALID_ARGS): Lines 5-9 are outside ~/${rel}/x.md (3 lines)\nRecovery: /edit ~/${rel}/x.md`);
    expect((await d.run(topic, `/edit ~/${rel}/x.md --lines x`)).body).toBe('ERROR(INVALID_ARGS): Invalid --lines value: x (use a-b)');
  });
  it('when #anchor is given, then that anchor shows with file line numbers', async () => {
    writeFileSync(join(dir, 'x.md'), '---\nt: 1\n---\n# A\n\n## B\n\nb text\n\n## C\n');
    expect((await d.run(topic, `/edit ~/${rel}/x.md#b`)).body).toBe(`~/${rel}/x.md#b (lines 6-9 of 10)\n---\n6 | ## B\n7 | \n8 | b text\n9 | `);
    expect((await d.run(topic, `/edit ~/${rel}/x.md#zz`)).body).toBe(`ERROR(NOT_FOUND): Anchor not found: #zz in ~/${rel}/x.md\nAnchors: #a, #b, #c`);
  });
  it('when a file has more than 2000 lines, then 2000 show and a hint names the next range', async () => {
    writeFileSync(join(dir, 'big.md'), Array.from({ length: 4500 }, (_, i) => String(i + 1)).join('\n'));
    const lines = (await d.run(topic, `/edit ~/${rel}/big.md`)).body.split('\n');
    expect(lines.length).toBe(2 + 2000 + 1);
    expect(lines[lines.length - 1]).toBe(`… 2500 more lines; /edit ~/${rel}/big.md --lines 2001-4000`);
  });
  it('when the file is missing, a folder, binary, or no path is given, then each error names it', async () => {
    writeFileSync(join(dir, 'bin'), Buffer.from([1, 0, 2]));
    expect((await d.run(topic, `/edit ~/${rel}/none.md`)).body).toBe(`ERROR(NOT_FOUND): File not found: ~/${rel}/none.md\nRecovery: /ls ~/${rel}`);
    expect((await d.run(topic, `/edit ~/${rel}`)).body).toBe(`ERROR(INVALID_PATH): Is a directory: ~/${rel}`);
    expect((await d.run(topic, `/edit ~/${rel}/bin`)).body).toBe(`ERROR(INVALID_TARGET): Not a text file: ~/${rel}/bin`);
    expect((await d.run(topic, '/edit')).body).toBe('ERROR(INVALID_ARGS): Usage: /edit <file>[#<anchor>] [--lines a-b]');
  });
});

describe('/write (behaviour.md §2.5)', () => {
  it('when the body ends with newlines or spaces, then they are kept (only the header line is trimmed, §2.1)', async () => {
    expect((await d.run(topic, `  /write ~/${rel}/nl.md  \nline\n\n`)).body).toBe(`Created ~/${rel}/nl.md (6 bytes, 2 lines)`);
    expect(read('nl.md')).toBe('line\n\n');
  });
  it('when a new file is written, then it is created with the body verbatim (folders created)', async () => {
    const r = await d.run(topic, `/write ~/${rel}/new/x.md\nline 1\nline 2`);
    expect(r.body).toBe(`Created ~/${rel}/new/x.md (13 bytes, 2 lines)`);
    expect(read('new/x.md')).toBe('line 1\nline 2');
    expect((await d.run(topic, `/write ~/${rel}/empty.md`)).body).toBe(`Created ~/${rel}/empty.md (0 bytes, 0 lines)`);
  });
  it('when an existing non-empty file was not read here, then CONFLICT; after /edit it is replaced and keeps its mode', async () => {
    writeFileSync(join(dir, 'x.sh'), 'old\n');
    chmodSync(join(dir, 'x.sh'), 0o750);
    expect((await d.run(topic, `/write ~/${rel}/x.sh\nnew`)).body).toBe(`ERROR(CONFLICT): ~/${rel}/x.sh was not read in this topic\nRecovery: /edit ~/${rel}/x.sh, then repeat; or add --force`);
    await d.run(topic, `/edit ~/${rel}/x.sh`);
    expect((await d.run(topic, `/write ~/${rel}/x.sh\nnew!`)).body).toBe(`Replaced ~/${rel}/x.sh (4 bytes, 1 line; was 4 bytes)`);
    expect(statSync(join(dir, 'x.sh')).mode & 0o777).toBe(0o750);
  });
  it('when the file changed since it was read, then CONFLICT; --force replaces anyway', async () => {
    writeFileSync(join(dir, 'x.md'), 'one');
    await d.run(topic, `/edit ~/${rel}/x.md`);
    writeFileSync(join(dir, 'x.md'), 'two');
    expect((await d.run(topic, `/write ~/${rel}/x.md\nthree`)).body).toBe(`ERROR(CONFLICT): ~/${rel}/x.md changed since it was read in this topic\nRecovery: /edit ~/${rel}/x.md, then repeat; or add --force`);
    expect((await d.run(topic, `/write --force ~/${rel}/x.md\nthree`)).ok).toBe(true);
    expect(read('x.md')).toBe('three');
  });
  it('when /open read the file, then /write may replace it; an empty file needs no read', async () => {
    writeFileSync(join(dir, 'doc.md'), '# D\n');
    writeFileSync(join(dir, 'empty.md'), '');
    await d.run(topic, `/open ~/${rel}/doc.md`);
    expect((await d.run(topic, `/write ~/${rel}/doc.md\n# E`)).ok).toBe(true);
    expect((await d.run(topic, `/write ~/${rel}/empty.md\nx`)).ok).toBe(true);
  });
  it('when the path is a folder, a file blocks a parent, or no path is given, then each error', async () => {
    writeFileSync(join(dir, 'file'), 'x');
    expect((await d.run(topic, `/write ~/${rel}\nx`)).body).toBe(`ERROR(INVALID_PATH): Is a directory: ~/${rel}`);
    expect((await d.run(topic, `/write ~/${rel}/file/x.md\nx`)).body).toBe(`ERROR(INVALID_PATH): Not a directory: ~/${rel}/file`);
    expect((await d.run(topic, '/write\nx')).body).toBe('ERROR(INVALID_ARGS): Usage: /write <file> (content on the following lines)');
  });
});

describe('/append (behaviour.md §2.5)', () => {
  it('when appending to a file without a final newline, then one is inserted first', async () => {
    writeFileSync(join(dir, 'x.md'), 'a');
    expect((await d.run(topic, `/append ~/${rel}/x.md\nb\nc`)).body).toBe(`Appended 3 bytes to ~/${rel}/x.md (now 5 bytes, 3 lines)`);
    expect(read('x.md')).toBe('a\nb\nc');
  });
  it('when the file is missing, then it is created like >> would (and /undo removes it again)', async () => {
    expect((await d.run(topic, `/append ~/${rel}/log.md\nfirst line`)).body).toBe(`Created ~/${rel}/log.md (10 bytes, 1 line)`);
    expect(read('log.md')).toBe('first line');
    expect((await d.run(topic, `/append ~/${rel}/log.md\nsecond`)).body).toBe(`Appended 6 bytes to ~/${rel}/log.md (now 17 bytes, 2 lines)`);
    expect(read('log.md')).toBe('first line\nsecond');
    expect((await d.run(topic, `/append ~/${rel}/empty.md`)).body).toBe(`Created ~/${rel}/empty.md (0 bytes, 0 lines)`);
    expect(read('empty.md')).toBe('');
    expect((await d.run(topic, `/undo ~/${rel}/empty.md`)).body).toBe(`Undid /append on ~/${rel}/empty.md (file removed)`);
    expect(existsSync(join(dir, 'empty.md'))).toBe(false);
  });
  it('when the parent folder is missing, then NOT_FOUND names it and nothing is created (>> creates no folders)', async () => {
    const r = await d.run(topic, `/append ~/${rel}/no/such/x.md\nx`);
    expect(r.body).toBe(`ERROR(NOT_FOUND): Folder not found: ~/${rel}/no/such\nRecovery: /write ~/${rel}/no/such/x.md (creates missing folders)`);
    expect(existsSync(join(dir, 'no'))).toBe(false);
  });
  it('when a file stands where the parent folder should be, then INVALID_PATH; no path is INVALID_ARGS', async () => {
    writeFileSync(join(dir, 'plain'), 'x');
    expect((await d.run(topic, `/append ~/${rel}/plain/x.md\nx`)).body).toBe(`ERROR(INVALID_PATH): Not a directory: ~/${rel}/plain`);
    expect(read('plain')).toBe('x');
    expect((await d.run(topic, '/append')).body).toBe('ERROR(INVALID_ARGS): Usage: /append <file> (content on the following lines)');
  });
  it('when the path is outside the workspace, then FORBIDDEN and nothing is created', async () => {
    const r = await d.run(topic, '/append /tmp/loom-append-outside.md\nx');
    expect(r.body).toBe('ERROR(FORBIDDEN): Path outside the workspace: /tmp/loom-append-outside.md');
    expect(existsSync('/tmp/loom-append-outside.md')).toBe(false);
  });
});

describe('/replace (behaviour.md §2.5)', () => {
  beforeEach(async () => {
    writeFileSync(join(dir, 'x.md'), 'one\ntwo\nthree\nfour\ntwo\n');
    await d.run(topic, `/edit ~/${rel}/x.md`);
  });
  it('when --lines a-b is given, then those lines are replaced by the body; an empty body deletes them', async () => {
    expect((await d.run(topic, `/replace ~/${rel}/x.md --lines 2-3\nTWO`)).body).toBe(`Replaced lines 2-3 of ~/${rel}/x.md with 1 line (now 4 lines)`);
    expect(read('x.md')).toBe('one\nTWO\nfour\ntwo\n');
    expect((await d.run(topic, `/replace ~/${rel}/x.md --lines 1`)).body).toBe(`Replaced line 1 of ~/${rel}/x.md with 0 lines (now 3 lines)`);
    expect(read('x.md')).toBe('TWO\nfour\ntwo\n');
  });
  it('when the range is outside the file, then INVALID_ARGS', async () => {
    expect((await d.run(topic, `/replace ~/${rel}/x.md --lines 5-9\nx`)).body).toBe(`ERROR(INVALID_ARGS): Lines 5-9 are outside ~/${rel}/x.md (5 lines)\nRecovery: /edit ~/${rel}/x.md`);
  });
  it('when the file changed since it was read, then --lines is refused with CONFLICT', async () => {
    writeFileSync(join(dir, 'x.md'), 'changed\n');
    expect((await d.run(topic, `/replace ~/${rel}/x.md --lines 1\nx`)).code).toBe('CONFLICT');
  });
  it('when --old matches once, then it is replaced; several matches need --all', async () => {
    expect((await d.run(topic, `/replace ~/${rel}/x.md --old "three"\n3`)).body).toBe(`Replaced 1 occurrence in ~/${rel}/x.md`);
    expect((await d.run(topic, `/replace ~/${rel}/x.md --old two\n2`)).body).toBe(`ERROR(CONFLICT): Text matches 2 times in ~/${rel}/x.md; add --all or include more context`);
    expect((await d.run(topic, `/replace ~/${rel}/x.md --all --old two\n2`)).body).toBe(`Replaced 2 occurrences in ~/${rel}/x.md`);
    expect(read('x.md')).toBe('one\n2\n3\nfour\n2\n');
    expect((await d.run(topic, `/replace ~/${rel}/x.md --old "zzz"\n`)).body).toBe(`ERROR(NOT_FOUND): Text not found in ~/${rel}/x.md`);
  });
  it('when the body is a conflict-marker block, then its old lines become its new lines', async () => {
    const r = await d.run(topic, `/replace ~/${rel}/x.md\n<<<<<<< old\nthree\nfour\n=======\n3 & 4\n>>>>>>> new`);
    expect(r.body).toBe(`Replaced 1 occurrence in ~/${rel}/x.md`);
    expect(read('x.md')).toBe('one\ntwo\n3 & 4\ntwo\n');
  });
  it('when no mode or two modes are given, then INVALID_ARGS usage', async () => {
    const usage = 'ERROR(INVALID_ARGS): Usage: /replace <file> --lines a-b | [--all] --old "<text>" (new text on the following lines), or a conflict-marker body';
    expect((await d.run(topic, `/replace ~/${rel}/x.md\nplain`)).body).toBe(usage);
    expect((await d.run(topic, `/replace ~/${rel}/x.md --lines 1 --old x\ny`)).body).toBe(usage);
  });
});

describe('/undo (behaviour.md §2.5)', () => {
  it('when the last edit is undone, then the file returns to its previous content; one step per file', async () => {
    writeFileSync(join(dir, 'x.md'), 'a\n');
    await d.run(topic, `/edit ~/${rel}/x.md`);
    await d.run(topic, `/replace ~/${rel}/x.md --lines 1\nb`);
    expect((await d.run(topic, '/undo')).body).toBe(`Undid /replace on ~/${rel}/x.md`);
    expect(read('x.md')).toBe('a\n');
    expect((await d.run(topic, `/undo ~/${rel}/x.md`)).body).toBe('ERROR(NOT_FOUND): Nothing to undo.');
  });
  it('when the edit created the file, then /undo removes it', async () => {
    await d.run(topic, `/write ~/${rel}/n.md\nx`);
    expect((await d.run(topic, `/undo ~/${rel}/n.md`)).body).toBe(`Undid /write on ~/${rel}/n.md (file removed)`);
    expect(existsSync(join(dir, 'n.md'))).toBe(false);
  });
  it('when the file changed after the edit, then CONFLICT and nothing is undone', async () => {
    await d.run(topic, `/write ~/${rel}/n.md\nx`);
    writeFileSync(join(dir, 'n.md'), 'outside');
    expect((await d.run(topic, '/undo')).body).toBe(`ERROR(CONFLICT): ~/${rel}/n.md changed after the edit; not undone`);
    expect(read('n.md')).toBe('outside');
  });
  it('when the file was over 5 MiB, then the edit says it is not undoable', async () => {
    writeFileSync(join(dir, 'big.md'), Buffer.alloc(5 * 1024 * 1024 + 1, 0x61));
    const r = await d.run(topic, `/append ~/${rel}/big.md\nz`);
    expect(r.body).toBe(`Appended 1 byte to ~/${rel}/big.md (now 5242883 bytes, 2 lines) (not undoable: file over 5 MiB)`);
    expect((await d.run(topic, `/undo ~/${rel}/big.md`)).body).toBe('ERROR(NOT_FOUND): Nothing to undo.');
  });
});

describe('file command errors shared by every command (behaviour.md §2.5)', () => {
  it('when a path holds NUL, a quote is unterminated, or /undo gets two paths, then INVALID_PATH or INVALID_ARGS', async () => {
    expect((await d.run(topic, '/edit ~/a\u0000b')).body).toBe('ERROR(INVALID_PATH): Path contains a NUL character');
    expect((await d.run(topic, '/write "~/x.md\nbody')).body).toBe('ERROR(INVALID_ARGS): Usage: /write <file> (content on the following lines)');
    expect((await d.run(topic, '/undo a b')).body).toBe('ERROR(INVALID_ARGS): Usage: /undo [<file>]');
    expect((await d.run(topic, '/undo\nbody')).body).toBe('ERROR(INVALID_ARGS): /undo does not take a body (text after the first line)');
  });
  it('when a binary file is written, appended or replaced, then INVALID_TARGET Not a text file', async () => {
    writeFileSync(join(dir, 'bin'), Buffer.from([0x61, 0, 0x62]));
    for (const cmd of [`/write --force ~/${rel}/bin\nx`, `/append ~/${rel}/bin\nx`, `/replace ~/${rel}/bin --old a\nx`]) {
      expect((await d.run(topic, cmd)).body).toBe(`ERROR(INVALID_TARGET): Not a text file: ~/${rel}/bin`);
    }
  });
  it('when a path has spaces, then quoting it works', async () => {
    expect((await d.run(topic, `/write "~/${rel}/with space.md"\nx`)).body).toBe(`Created ~/${rel}/with space.md (1 byte, 1 line)`);
    expect((await d.run(topic, `/edit '~/${rel}/with space.md'`)).body).toBe(`~/${rel}/with space.md (1 line)\n---\n1 | x`);
  });
  it('when a space in a path is escaped with a backslash, then it is one path (the tokenizer of behaviour.md §5.2)', async () => {
    expect((await d.run(topic, `/write ~/${rel}/back\\ slash.md\ny`)).body).toBe(`Created ~/${rel}/back slash.md (1 byte, 1 line)`);
    expect((await d.run(topic, `/write "~/${rel}/open`)).body).toBe('ERROR(INVALID_ARGS): Usage: /write <file> (content on the following lines)');
  });
});
