import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningDaemon } from '../helpers/daemon.js';
import { alive, Daemons, exec, json } from './support.js';

/**
 * File commands given a path the file system cannot take (a 300-byte name, a
 * 4 KiB path, a file standing where a folder should be, a symlink loop) answer INVALID_PATH or
 * NOT_FOUND with the path, never INTERNAL_ERROR. Every path-taking command is tried with every class.
 */

const daemons = new Daemons();
let d: RunningDaemon;
let home = '';
const LONG = 'a'.repeat(300);
const DEEP = 'abcdefghi/'.repeat(420) + 'x.md';

const DOC = `# files

\`\`\`act.show
CLI printf '%s' {v}
  v: string (required)
\`\`\`
`;

beforeAll(async () => {
  d = await daemons.start();
  home = String((await json(d.base, 'POST', '/agents', { agent_id: 'pat' })).body.home);
  writeFileSync(join(home, 'x.txt'), 'hi\n');
  writeFileSync(join(home, 'doc.md'), DOC);
  mkdirSync(join(home, 'dir'));
  symlinkSync('loop', join(home, 'loop'));
});
afterAll(() => daemons.killAll());

/** The commands that take a path, with the path put in; each gets the same classes. */
const COMMANDS: Array<[string, (p: string) => string]> = [
  ['/ls', (p) => `/ls ${p}`],
  ['/open', (p) => `/open ${p}`],
  ['/edit', (p) => `/edit ${p}`],
  ['/source', (p) => `/source ${p}`],
  ['/write', (p) => `/write ${p}\nhi`],
  ['/write --force', (p) => `/write --force ${p}\nhi`],
  ['/append', (p) => `/append ${p}\nhi`],
  ['/replace', (p) => `/replace ${p} --lines 1\nhi`],
  ['/undo', (p) => `/undo ${p}`],
];

/** Path classes and the first line every command must answer with. */
const CLASSES: Array<[string, string, string]> = [
  ['a 300-byte name', LONG, `ERROR(INVALID_PATH): Name too long: ~/${LONG}`],
  ['a 300-byte name below a missing folder', `new/${LONG}/x`, `ERROR(INVALID_PATH): Name too long: ~/new/${LONG}/x`],
  ['a path over 4095 bytes', DEEP, `ERROR(INVALID_PATH): Path too long: ~/${DEEP}`],
  ['a symlink loop', 'loop/x.md', 'ERROR(INVALID_PATH): Too many levels of symbolic links: ~/loop/x.md'],
];

describe('malformed paths in file commands', () => {
  it.each(COMMANDS.flatMap(([name, cmd]) => CLASSES.map(([cls, p, want]) => [name, cls, cmd(p), want])))('%s with %s answers INVALID_PATH', async (_n, _c, cmd, want) => {
    const r = await exec(d.base, 'pat', 'main', cmd);
    expect(r.head?.code).toBe('INVALID_PATH');
    expect(r.body?.split('\n')[0]).toBe(want);
  });

  it.each([
    ['/write x.txt/sub\nhi', 'ERROR(INVALID_PATH): Not a directory: ~/x.txt'],
    ['/write --force x.txt/sub/deeper\nhi', 'ERROR(INVALID_PATH): Not a directory: ~/x.txt'],
    ['/write --force dir\nhi', 'ERROR(INVALID_PATH): Is a directory: ~/dir'],
    ['/open x.txt/sub', 'ERROR(NOT_FOUND): File not found: ~/x.txt/sub'],
    ['/edit x.txt/sub/deeper', 'ERROR(NOT_FOUND): File not found: ~/x.txt/sub/deeper'],
    ['/ls x.txt/sub', 'ERROR(NOT_FOUND): Not found: ~/x.txt/sub'],
    ['/source x.txt/sub', 'ERROR(NOT_FOUND): File not found: ~/x.txt/sub'],
    ['/replace x.txt/sub --lines 1\nhi', 'ERROR(NOT_FOUND): File not found: ~/x.txt/sub'],
  ])('when a file stands where a folder should be: %j answers %j', async (cmd, want) => {
    const r = await exec(d.base, 'pat', 'main', cmd);
    expect(r.body?.split('\n')[0]).toBe(want);
  });

  it.each([
    [`--v-file ${LONG}`, `ERROR(INVALID_ARGS): Cannot read --v-file ~/${LONG}: name too long`],
    ['--v-file x.txt/sub', 'ERROR(INVALID_ARGS): Cannot read --v-file ~/x.txt/sub: no such file'],
    ['--v-file loop', 'ERROR(INVALID_ARGS): Cannot read --v-file ~/loop: too many levels of symbolic links'],
  ])('when an action reads %s, then INVALID_ARGS names the reason', async (flag, want) => {
    await exec(d.base, 'pat', 'act', '/open ~/doc.md');
    const r = await exec(d.base, 'pat', 'act', `/act.show ${flag}`);
    expect(r.body?.split('\n')[0]).toBe(want);
  });

  it.each(['/append x.txt/sub\nhi', '/append x.txt/sub/deeper\nhi', '/undo x.txt/sub'])('when %j meets a file in place of a folder, then it is INVALID_PATH or NOT_FOUND', async (cmd) => {
    expect(['INVALID_PATH', 'NOT_FOUND']).toContain((await exec(d.base, 'pat', 'main', cmd)).head?.code);
  });

  it('after every bad path the daemon is up and no answer was INTERNAL_ERROR', async () => {
    expect(await alive(d)).toBe(true);
    expect(d.stderr()).not.toMatch(/Error:/);
  });
});
