import { afterAll, describe, expect, it } from '@jest/globals';
import { lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { FileStep } from '../../src/domain/trace.js';
import { ExecTransport } from '../../src/replay/http.js';
import { NotSent, writeFileStep, type Target } from '../../src/replay/send.js';
import { tempDir } from '../helpers/daemon.js';

/*
 * A trace's file steps (behaviour.md §14.2) against a home that holds symlinks, files and folders in
 * the way: every refusal is a failed step (NotSent) with one line, and nothing appears outside the home.
 */

const transports: ExecTransport[] = [];
afterAll(() => { for (const t of transports) t.close(); });

function targetAt(home: string): Target {
  const http = new ExecTransport('http://127.0.0.1:9');
  transports.push(http);
  return { url: 'http://127.0.0.1:9', port: 9, lookup: () => undefined, secrets: [], ids: new Map(), agentHome: async () => home, http };
}

const step = (path: string, content = 'x'): FileStep => ({ seq: 1, kind: 'file', agent_id: 'leo', path, content });

/** A home and a folder outside it, side by side in a fresh temp folder. */
function homeAndOutside(): { home: string; outside: string } {
  const root = tempDir('loom-filestep-');
  const home = join(root, 'home');
  const outside = join(root, 'outside');
  mkdirSync(home);
  mkdirSync(outside);
  return { home, outside };
}

async function refusal(path: string, home: string): Promise<string> {
  const err = await writeFileStep(step(path), 'leo', targetAt(home)).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(NotSent);
  const message = (err as NotSent).message;
  expect(message).not.toContain('\n');
  return message;
}

describe('file steps never write outside the agent home (behaviour.md §14.2)', () => {
  it('a symlinked folder below the home is refused, naming it; nothing is created behind it', async () => {
    const { home, outside } = homeAndOutside();
    symlinkSync(outside, join(home, 'lnkdir'));
    expect(await refusal('~/lnkdir/pwned.txt', home)).toBe('file step ~/lnkdir/pwned.txt: refusing to write through a symlink (~/lnkdir)');
    expect(await refusal('~/lnkdir/new/deeper/pwned.txt', home)).toBe('file step ~/lnkdir/new/deeper/pwned.txt: refusing to write through a symlink (~/lnkdir)');
    expect(readdirSync(outside)).toEqual([]);
  });

  it('a symlink deeper down is found too, after the folders before it', async () => {
    const { home, outside } = homeAndOutside();
    mkdirSync(join(home, 'a'));
    symlinkSync(outside, join(home, 'a', 'b'));
    expect(await refusal('~/a/b/c/pwned.txt', home)).toBe('file step ~/a/b/c/pwned.txt: refusing to write through a symlink (~/a/b)');
    expect(readdirSync(outside)).toEqual([]);
  });

  it('a symlink at the last name is refused (O_NOFOLLOW): its target keeps its content', async () => {
    const { home, outside } = homeAndOutside();
    writeFileSync(join(outside, 'victim.txt'), 'original');
    symlinkSync(join(outside, 'victim.txt'), join(home, 'notes.txt'));
    symlinkSync(join(outside, 'missing.txt'), join(home, 'dangling.txt'));
    expect(await refusal('~/notes.txt', home)).toBe('file step ~/notes.txt: refusing to write through a symlink (~/notes.txt)');
    expect(await refusal('~/dangling.txt', home)).toBe('file step ~/dangling.txt: refusing to write through a symlink (~/dangling.txt)');
    expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('original');
    expect(readdirSync(outside)).toEqual(['victim.txt']);
  });

  it('a file in the way, a folder at the end or a FIFO: a clean one-line failure, not a crash', async () => {
    const { home } = homeAndOutside();
    writeFileSync(join(home, 'notes.txt'), 'keep');
    mkdirSync(join(home, 'adir'));
    mkfifo(join(home, 'pipe'));
    expect(await refusal('~/notes.txt/sub', home)).toBe('file step ~/notes.txt/sub: ~/notes.txt is not a folder');
    expect(await refusal('~/adir', home)).toBe('file step ~/adir: ~/adir is a folder');
    expect(await refusal('~/pipe', home)).toBe('file step ~/pipe: ~/pipe is not a regular file');
    expect(readFileSync(join(home, 'notes.txt'), 'utf8')).toBe('keep');
  });

  it('a home that is itself a symlink is fine; new folders are 0700, new files 0600', async () => {
    const { home } = homeAndOutside();
    const link = `${home}-link`;
    symlinkSync(home, link);
    await writeFileStep(step('~/apps/w/x.md', 'hello'), 'leo', targetAt(link));
    expect(readFileSync(join(home, 'apps', 'w', 'x.md'), 'utf8')).toBe('hello');
    expect(lstatSync(join(home, 'apps')).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(home, 'apps', 'w')).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(home, 'apps', 'w', 'x.md')).mode & 0o777).toBe(0o600);
    // An existing file is replaced whole.
    await writeFileStep(step('~/apps/w/x.md', 'hi'), 'leo', targetAt(link));
    expect(readFileSync(join(home, 'apps', 'w', 'x.md'), 'utf8')).toBe('hi');
  });
});

/** Node has no mkfifo; the coreutils one makes the FIFO a hostile shell step could leave behind. */
function mkfifo(path: string): void {
  execFileSync('mkfifo', ['-m', '600', path]);
}
