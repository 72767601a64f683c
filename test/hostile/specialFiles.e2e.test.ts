import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/daemon.js';
import { Daemons, exec } from './support.js';

/**
 * behaviour.md §16: a FIFO, a character device and a file that grows while read, pointed at by every
 * command that opens a file for an agent. Each is refused with the command's not-a-file (or
 * too-large) error, and while it happens the daemon answers everyone else: /health and another
 * agent's /info come back (timings are measured in bench/isolation, not asserted here).
 */

jest.setTimeout(120000);

const daemons = new Daemons();
let base: string;
let home: string;
let root: string;
let secret: string;
let writer: ChildProcess | undefined;

const MIB = 1024 * 1024;

/** The daemon still serves others: /health and another agent's /info answer. */
async function othersServed(): Promise<void> {
  const [health, info] = await Promise.all([
    fetch(`${base}/health`).then((r) => r.status),
    exec(base, 'ana', 'main', '/info'),
  ]);
  expect(health).toBe(200);
  expect(info.head?.ok).toBe(true);
}

/** Run `cmd` as leo while checking that others are served meanwhile; returns the answer body. */
async function leo(cmd: string): Promise<string> {
  const [r] = await Promise.all([exec(base, 'leo', 'main', cmd), othersServed()]);
  return r.body ?? '';
}

/** First line of an answer without the `re:` line. */
const first = (body: string) => body.split('\n')[0];

beforeAll(async () => {
  root = realpathSync(tempDir('loom-special-'));
  const d = await daemons.start({ dataDir: join(root, 'data') });
  base = d.base;
  home = join(root, 'home');
  mkdirSync(home);
  // /dev is an allowed path: its devices are reachable by path and pass the workspace policy.
  for (const [id, body] of [['leo', { home, allowed_paths: ['/dev'] }], ['ana', {}]] as const) {
    const r = await fetch(`${base}/agents`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_id: id, ...body }) });
    expect(r.status).toBe(200);
  }
  expect(spawnSync('mkfifo', [join(home, 'p.md')]).status).toBe(0);
  mkdirSync(join(home, 'pkg'));
  expect(spawnSync('mkfifo', [join(home, 'pkg', 'string.md')]).status).toBe(0);
  writeFileSync(join(home, 'doc.md'), "# Doc\n\n```act.note\nCLI printf '%s' {text}\n  text: string (required)\n```\n");
  const mint = await fetch(`${base}/capabilities`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ agent_id: 'leo', verbs: ['GET', 'PUT'], ttl_ms: 600000 }),
  });
  secret = ((await mint.json()) as { secret: string }).secret;
});

afterAll(async () => {
  writer?.kill('SIGKILL');
  await daemons.killAll();
  rmSync(root, { recursive: true, force: true });
});

describe('a FIFO in the home (behaviour.md §16)', () => {
  it('/open, /source, /edit, /append, /write, /replace: INVALID_PATH not a regular file', async () => {
    const refused = 'ERROR(INVALID_PATH): not a regular file: ~/p.md';
    expect(first(await leo('/open ~/p.md'))).toBe(refused);
    expect(first(await leo('/source ~/p.md'))).toBe(refused);
    expect(first(await leo('/edit ~/p.md'))).toBe(refused);
    expect(first(await leo('/append ~/p.md\nmore'))).toBe(refused);
    expect(first(await leo('/write --force ~/p.md\nnew'))).toBe(refused);
    expect(first(await leo('/replace ~/p.md --lines 1\nx'))).toBe(refused);
    // Nothing replaced the pipe.
    expect(statSync(join(home, 'p.md')).isFIFO()).toBe(true);
  });

  it('/ls of a FIFO, /undo of a file replaced by a FIFO, a nav menu file that is a FIFO', async () => {
    expect(first(await leo('/ls ~/p.md'))).toBe('ERROR(INVALID_PATH): Not a directory: ~/p.md');
    expect(first(await leo('/write ~/u.md\none'))).toBe('Created ~/u.md (3 bytes, 1 line)');
    rmSync(join(home, 'u.md'));
    expect(spawnSync('mkfifo', [join(home, 'u.md')]).status).toBe(0);
    expect(first(await leo('/undo ~/u.md'))).toBe('ERROR(CONFLICT): ~/u.md changed after the edit; not undone');
    expect(statSync(join(home, 'u.md')).isFIFO()).toBe(true);
    writeFileSync(join(home, 'menu.md'), '[!nav:main](./p.md)\n\n# Menu\n');
    const opened = await leo('/open ~/menu.md');
    expect(first(opened)).toBe('Opened ~/menu.md');
    expect(opened).toContain('cannot read nav file ./p.md: not a regular file: ~/p.md');
  });

  it('/install of a FIFO, and of a folder whose string.md is a FIFO', async () => {
    expect(first(await leo('/install ~/p.md'))).toBe('ERROR(INVALID_PATH): not a regular file: ~/p.md');
    expect(first(await leo('/install ~/pkg'))).toBe('ERROR(INSTALL_FAILED): No string.md in ~/pkg');
    expect(first(await leo('/install --link ~/pkg'))).toBe('ERROR(INSTALL_FAILED): No string.md in ~/pkg');
  });

  it('a --<field>-file argument naming a FIFO', async () => {
    expect(first(await leo('/open ~/doc.md'))).not.toMatch(/^ERROR/);
    expect(first(await leo('/act.note --text-file ~/p.md'))).toBe('ERROR(INVALID_ARGS): Cannot read --text-file ~/p.md: not a regular file');
  });

  it('/fs GET and PUT: 400 not_a_regular_file, the pipe left in place', async () => {
    const auth = { Authorization: `Bearer ${secret}` };
    const get = await fetch(`${base}/fs/p.md`, { headers: auth });
    expect(get.status).toBe(400);
    expect(await get.json()).toEqual({ error: 'Not a regular file: p.md', reason: 'not_a_regular_file' });
    const put = await fetch(`${base}/fs/p.md`, { method: 'PUT', headers: auth, body: 'x' });
    expect(put.status).toBe(400);
    expect(await put.json()).toEqual({ error: 'Not a regular file: p.md', reason: 'not_a_regular_file' });
    expect(statSync(join(home, 'p.md')).isFIFO()).toBe(true);
    await othersServed();
  });
});

describe('a character device reached by path (/dev is an allowed path)', () => {
  it('/dev/zero and /dev/tty on every file command: INVALID_PATH not a regular file', async () => {
    for (const dev of ['/dev/zero', '/dev/tty']) {
      const refused = `ERROR(INVALID_PATH): not a regular file: ${dev}`;
      expect(first(await leo(`/open ${dev}`))).toBe(refused);
      expect(first(await leo(`/source ${dev}`))).toBe(refused);
      expect(first(await leo(`/edit ${dev}`))).toBe(refused);
      expect(first(await leo(`/append ${dev}\nx`))).toBe(refused);
      expect(first(await leo(`/write --force ${dev}\nx`))).toBe(refused);
      expect(first(await leo(`/replace ${dev} --lines 1\nx`))).toBe(refused);
      expect(first(await leo(`/install ${dev}`))).toBe(refused);
    }
  });

  it('a --<field>-file argument naming /dev/zero', async () => {
    expect(first(await leo('/open ~/doc.md'))).not.toMatch(/^ERROR/);
    expect(first(await leo('/act.note --text-file /dev/zero'))).toBe('ERROR(INVALID_ARGS): Cannot read --text-file /dev/zero: not a regular file');
  });
});

describe('a file that grows while it is read', () => {
  /** Append 256 KiB every 10 ms until `cap` bytes (the test kills it earlier). */
  const grow = (path: string, cap: number) => spawn(process.execPath, ['-e', `
    const fs = require('fs'); const fd = fs.openSync(${JSON.stringify(path)}, 'a'); const chunk = Buffer.alloc(262144, 97);
    let n = 0; const t = setInterval(() => { fs.writeSync(fd, chunk); n += chunk.length; if (n >= ${cap}) clearInterval(t); }, 10);`], { stdio: 'ignore' });

  it('is refused as too large at each command\'s limit, never read without end', async () => {
    const path = join(home, 'grow.md');
    writeFileSync(path, '');
    writer = grow(path, 100 * MIB);
    for (let i = 0; i < 200 && statSync(path).size <= 11 * MIB; i++) await new Promise((r) => setTimeout(r, 50));
    expect(statSync(path).size).toBeGreaterThan(11 * MIB);
    expect(first(await leo('/open ~/grow.md'))).toBe('ERROR(INVALID_TARGET): Not a text document: ~/grow.md (over 5 MiB)');
    expect(first(await leo('/source ~/grow.md'))).toBe('ERROR(INVALID_TARGET): Not a text document: ~/grow.md (over 5 MiB)');
    expect(first(await leo('/edit ~/grow.md'))).toBe('ERROR(INVALID_TARGET): Not a text file: ~/grow.md (over 10 MiB)');
    expect(first(await leo('/append ~/grow.md\nx'))).toBe('ERROR(INVALID_TARGET): Not a text file: ~/grow.md (over 10 MiB)');
    expect(first(await leo('/replace ~/grow.md --lines 1\nx'))).toBe('ERROR(INVALID_TARGET): Not a text file: ~/grow.md (over 10 MiB)');
    expect(first(await leo('/install ~/grow.md'))).toBe('ERROR(INSTALL_FAILED): ~/grow.md is larger than 5 MiB');
    expect(first(await leo('/act.note --text-file ~/grow.md'))).toMatch(/^ERROR\(INVALID_ARGS\): --text-file ~\/grow\.md is too large: \d+ bytes \(limit 1048576\)$/);
    // /fs GET sends the size the file had when opened: the body matches its Content-Length.
    const got = await fetch(`${base}/fs/grow.md`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(got.status).toBe(200);
    expect((await got.arrayBuffer()).byteLength).toBe(Number(got.headers.get('content-length')));
    writer.kill('SIGKILL');
  });
});
