import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmodSync, closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../helpers/daemon.js';
import { hashTree, installBench, leftovers, writeTree, type InstallBench } from './support.js';

/** behaviour.md §7.1, §7.2, §7.5–7.7 with local sources. */

let b: InstallBench;
const reg = () => JSON.parse(readFileSync(join(b.t.dataDir, 'agents/leo/state/packages.json'), 'utf8'));

/** A file of `size` bytes that takes no disk space (the limits look at sizes). */
function sparse(path: string, size: number): void {
  mkdirSync(join(path, '..'), { recursive: true });
  const fd = openSync(path, 'w');
  ftruncateSync(fd, size);
  closeSync(fd);
}

beforeAll(async () => {
  b = await installBench();
  writeTree(b.home, {
    'notes/todo.md': '# Todo\n\n- milk\n',
    'apps/weather/string.md': '---\nversion: 0.3.0\ndescription: |\n  Weather everywhere\n  second line\n---\n# Weather\n',
    'apps/weather/pages/more.md': '# More\n',
    'apps/weather/.git/config': 'secret',
    'apps/weather/.env': 'TOKEN=x',
    'apps/nostring/readme.md': '# no root\n',
    'apps/named/string.md': '---\nname: "@acme/weather"\ntype: tool\n---\n# Acme\n',
    'dev/notes/string.md': '# Notes v1\n',
    'dev/notes/page.md': '# Page\n',
  });
  writeFileSync(join(b.home, 'apps/weather/run.sh'), '#!/bin/sh\necho hi\n');
  chmodSync(join(b.home, 'apps/weather/run.sh'), 0o755);
  symlinkSync('/etc/passwd', join(b.home, 'apps/weather/passwd'));
  symlinkSync('pages', join(b.home, 'apps/weather/alias'));
});
afterAll(async () => { await b?.close(); });

describe('local file installs (behaviour.md §7.2 File)', () => {
  it('when a file is installed, then it is copied as string.md, named after the file, and registered', async () => {
    const r = await b.run('main', '/install ~/notes/todo.md');
    expect(r.body).toBe('Installed app:todo (local, 1 file) from ~/notes/todo.md\nnext: /open app:todo');
    expect(readdirSync(join(b.home, 'packages/todo'))).toEqual(['string.md']);
    expect(readFileSync(join(b.home, 'packages/todo/string.md'), 'utf8')).toBe('# Todo\n\n- milk\n');
    const rec = reg().packages.todo;
    expect(rec).toEqual({
      name: 'todo', type: 'app', mode: 'local', uri: pathToFileURL(join(b.home, 'packages/todo/string.md')).href,
      source: '~/notes/todo.md', files: 1, installedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), installId: expect.stringMatching(/^ins_[0-9a-f]{16}$/),
    });
    expect(reg().version).toBe(1);
    expect(statSync(join(b.t.dataDir, 'agents/leo/state/packages.json')).mode & 0o777).toBe(0o600);
  });

  it('when the file is a string.md, then the package is named after its folder', async () => {
    expect((await b.run('main', '/install ~/apps/weather/string.md --as w1')).ok).toBe(true);
    writeTree(b.home, { 'x/seoul/string.md': '# Seoul\n' });
    expect((await b.run('main', '/install ~/x/seoul/string.md')).body.split('\n')[0]).toBe('Installed app:seoul (local, 1 file) from ~/x/seoul/string.md');
  });
});

describe('local folder installs (behaviour.md §7.2 Folder)', () => {
  it('when a folder is installed, then its tree is copied without dot entries and symlinks (counted), modes kept', async () => {
    const r = await b.run('main', '/install ~/apps/weather');
    expect(r.body).toBe('Installed app:weather (local, 3 files; 2 symlinks skipped) from ~/apps/weather\nnext: /open app:weather');
    const pkg = join(b.home, 'packages/weather');
    expect(readdirSync(pkg).sort()).toEqual(['pages', 'run.sh', 'string.md']);
    expect(statSync(join(pkg, 'run.sh')).mode & 0o777).toBe(0o755);
    expect(statSync(join(pkg, 'string.md')).mode & 0o777).toBe(statSync(join(b.home, 'apps/weather/string.md')).mode & 0o777);
    expect(reg().packages.weather).toMatchObject({ version: '0.3.0', description: 'Weather everywhere', files: 3, source: '~/apps/weather' });
    expect(leftovers(b.home)).toEqual([]);
  });

  it('when the folder has no string.md, then INSTALL_FAILED names it and nothing is written', async () => {
    expect((await b.run('main', '/install ~/apps/nostring')).body).toBe('ERROR(INSTALL_FAILED): No string.md in ~/apps/nostring');
    expect(existsSync(join(b.home, 'packages/nostring'))).toBe(false);
  });

  it('when the same name is installed again, then it is replaced atomically and says Reinstalled (old files gone)', async () => {
    writeTree(b.home, { 'v/a/string.md': '---\nname: twice\n---\n# A\n', 'v/a/only-a.md': 'a', 'v/b/string.md': '---\nname: twice\n---\n# B\n' });
    expect((await b.run('main', '/install ~/v/a')).body.split('\n')[0]).toBe('Installed app:twice (local, 2 files) from ~/v/a');
    expect((await b.run('main', '/install ~/v/b')).body).toBe([
      'Reinstalled app:twice (local, 1 file) from ~/v/b',
      '  was:  ~/v/a  -  local',
      '  now:  ~/v/b  -  local',
      'next: /open app:twice',
    ].join('\n'));
    expect(hashTree(join(b.home, 'packages/twice'))).toBe(hashTree(join(b.home, 'v/b')));
    expect(leftovers(b.home)).toEqual([]);
  });

  it('when a package of another source and version is replaced, then the answer names source and version before and after', async () => {
    writeTree(b.home, { 'ver/one/string.md': '---\nname: versioned\nversion: 0.1.0\n---\n# One\n', 'ver/two.md': '---\nname: versioned\nversion: 0.2.0\n---\n# Two\n' });
    expect((await b.run('main', '/install ~/ver/one --link')).body).toBe('Installed app:versioned in place → ~/ver/one/string.md\nnext: /open app:versioned');
    expect((await b.run('main', '/install ~/ver/two.md')).body).toBe([
      'Reinstalled app:versioned (local, 1 file) from ~/ver/two.md',
      '  was:  ~/ver/one     0.1.0  inplace',
      '  now:  ~/ver/two.md  0.2.0  local',
      'next: /open app:versioned',
    ].join('\n'));
  });

  it('when string.md is not UTF-8 text, then INSTALL_FAILED and nothing is written', async () => {
    writeTree(b.home, { 'bin/pkg/string.md': Buffer.from([0x23, 0x20, 0xff, 0xfe, 0x0a]) });
    expect((await b.run('main', '/install ~/bin/pkg')).body).toBe('ERROR(INSTALL_FAILED): string.md is not UTF-8 text');
    expect(existsSync(join(b.home, 'packages/pkg'))).toBe(false);
  });
});

describe('folder limits (behaviour.md §1.8: 500 files, 5 MiB per file, 50 MiB in all)', () => {
  it('when a folder has 501 files, then INSTALL_FAILED before anything is copied', async () => {
    const files: Record<string, string> = { 'string.md': '# Many\n' };
    for (let i = 0; i < 500; i++) files[`f/${i}.md`] = 'x';
    writeTree(join(b.home, 'many'), files);
    expect((await b.run('main', '/install ~/many')).body).toBe('ERROR(INSTALL_FAILED): ~/many has more than 500 files');
    expect(existsSync(join(b.home, 'packages/many'))).toBe(false);
  });

  it('when a folder has exactly 500 files, then it installs', async () => {
    const files: Record<string, string> = { 'string.md': '# Full\n' };
    for (let i = 0; i < 499; i++) files[`f/${i}.md`] = 'x';
    writeTree(join(b.home, 'full'), files);
    expect((await b.run('main', '/install ~/full')).body.split('\n')[0]).toBe('Installed app:full (local, 500 files) from ~/full');
  });

  it('when one file is over 5 MiB, then INSTALL_FAILED names it; exactly 5 MiB is fine', async () => {
    writeTree(join(b.home, 'big'), { 'string.md': '# Big\n' });
    sparse(join(b.home, 'big/data.bin'), 5 * 1048576 + 1);
    expect((await b.run('main', '/install ~/big')).body).toBe('ERROR(INSTALL_FAILED): ~/big/data.bin is larger than 5 MiB');
    sparse(join(b.home, 'big/data.bin'), 5 * 1048576);
    expect((await b.run('main', '/install ~/big')).body.split('\n')[0]).toBe('Installed app:big (local, 2 files) from ~/big');
  });

  it('when the files add up to more than 50 MiB, then INSTALL_FAILED and nothing is written', async () => {
    writeTree(join(b.home, 'huge'), { 'string.md': '# Huge\n' });
    for (let i = 0; i < 10; i++) sparse(join(b.home, `huge/part${i}.bin`), 5 * 1048576);
    expect((await b.run('main', '/install ~/huge')).body).toBe('ERROR(INSTALL_FAILED): Package is larger than 50 MiB');
    expect(existsSync(join(b.home, 'packages/huge'))).toBe(false);
    expect(leftovers(b.home)).toEqual([]);
  });
});

describe('--link in place (behaviour.md §7.2)', () => {
  it('when a folder is linked, then nothing is copied, opens show edits, and /uninstall leaves it', async () => {
    const r = await b.run('main', '/install ~/dev/notes --link');
    expect(r.body).toBe('Installed app:notes in place → ~/dev/notes/string.md\nnext: /open app:notes');
    expect(existsSync(join(b.home, 'packages/notes'))).toBe(false);
    expect(reg().packages.notes).toMatchObject({ mode: 'inplace', uri: pathToFileURL(join(b.home, 'dev/notes/string.md')).href, source: '~/dev/notes' });
    expect(reg().packages.notes.files).toBeUndefined();
    expect((await b.run('app:notes', '/open')).body).toContain('# Notes v1');
    writeFileSync(join(b.home, 'dev/notes/string.md'), '# Notes v2\n');
    expect((await b.run('app:notes', '/refresh')).body).toContain('# Notes v2');
    expect((await b.run('app:notes', '/open app:notes/page.md')).body.split('\n')[0]).toBe('Opened app:notes/page.md (~/dev/notes/page.md)');
    expect((await b.run('main', '/uninstall notes')).body).toBe('Uninstalled app:notes (registration removed; ~/dev/notes/string.md left in place)');
    expect(readFileSync(join(b.home, 'dev/notes/string.md'), 'utf8')).toBe('# Notes v2\n');
  });

  it('when a file is linked, then the file itself is the root', async () => {
    expect((await b.run('main', '/install --link ~/notes/todo.md --as todolink')).body.split('\n')[0]).toBe('Installed app:todolink in place → ~/notes/todo.md');
  });

  it('when a path inside ~/packages is linked, then INSTALL_FAILED', async () => {
    expect((await b.run('main', '/install ~/packages/weather --link --as w3')).body).toBe('ERROR(INSTALL_FAILED): Cannot install in place from inside ~/packages; install it without --link');
  });
});

describe('names and types (behaviour.md §7.5)', () => {
  it('when frontmatter names the package, then it is sanitised; type comes from frontmatter', async () => {
    const r = await b.run('main', '/install ~/apps/named');
    expect(r.body).toBe('Installed app:acme-weather (local, 1 file) from ~/apps/named\nnext: /open app:acme-weather · /open tool');
    expect(reg().packages['acme-weather'].type).toBe('tool');
    expect((await b.run('tool', '/open')).body).toContain('  acme-weather  local  -  ~/apps/named');
  });

  it('when --as and --app are given (before or after the source), then they win', async () => {
    expect((await b.run('main', '/install --as pinned --app ~/apps/named')).body.split('\n')[0]).toBe('Installed app:pinned (local, 1 file) from ~/apps/named');
    expect(reg().packages.pinned.type).toBe('app');
    expect((await b.run('main', '/install ~/apps/named --tool --as pinned2')).body.split('\n')[1]).toBe('next: /open app:pinned2 · /open tool');
  });

  it('when no name can be derived, then INSTALL_FAILED asks for --as', async () => {
    writeTree(b.home, { '---/string.md': '---\nname: "!!!"\n---\n# x\n' });
    expect((await b.run('main', '/install ~/---')).body).toBe('ERROR(INSTALL_FAILED): Cannot derive a package name; use --as <name>');
  });

  it('when a quoted path holds spaces, then it is one source', async () => {
    writeTree(b.home, { 'my apps/Daily Notes/string.md': '# Daily\n' });
    expect((await b.run('main', '/install "~/my apps/Daily Notes"')).body.split('\n')[0]).toBe('Installed app:Daily-Notes (local, 1 file) from ~/my apps/Daily Notes');
  });
});

describe('/install argument errors (behaviour.md §7.1)', () => {
  const USAGE = 'ERROR(INVALID_ARGS): Usage: /install <path|URL|gh:owner/repo[/path][@ref]> [--app|--tool] [--link|--local] [--as <name>]';
  it.each([
    ['/install ~/a --link --local', 'ERROR(INVALID_ARGS): Use either --link or --local, not both'],
    ['/install --app ~/a --tool', 'ERROR(INVALID_ARGS): Use either --app or --tool, not both'],
    ['/install ~/a --as a.b', 'ERROR(INVALID_ARGS): Invalid package name: a.b'],
    ['/install ~/a --as -x', 'ERROR(INVALID_ARGS): Invalid package name: -x'],
    ['/install ~/a --frob', USAGE],
    ['/install ~/a ~/b', USAGE],
    ['/install ~/a --as', USAGE],
    ['/install gh:owner', 'ERROR(INVALID_ARGS): Invalid GitHub source: gh:owner (use gh:owner/repo[/path][@ref])'],
    ['/install gh:o/r --link', 'ERROR(INVALID_ARGS): --link is not supported for GitHub sources'],
    ['/install https://github.com/o/r/tree/main --link', 'ERROR(INVALID_ARGS): --link is not supported for GitHub sources'],
    ['/install ~/nope', 'ERROR(NOT_FOUND): Not found: ~/nope'],
    ['/install "~/a\'', 'ERROR(INVALID_ARGS): Unterminated quote in the arguments'],
  ])('when %s, then %s', async (cmd, want) => {
    expect((await b.run('main', cmd)).body).toBe(want);
  });

  it('when the source is outside the workspace, then FORBIDDEN', async () => {
    const outside = writeTree(tempDir(), { 'string.md': '# out\n' });
    expect((await b.run('main', `/install ${outside}`)).body).toBe(`ERROR(FORBIDDEN): Path outside the workspace: ${outside}`);
  });

  it('when no source is given, then the current local document is installed; without one, usage', async () => {
    expect((await b.run('fresh', '/install')).body).toBe(USAGE);
    await b.run('cur', '/open ~/notes/todo.md');
    expect((await b.run('cur', '/install --as current')).body.split('\n')[0]).toBe('Installed app:current (local, 1 file) from ~/notes/todo.md');
  });

  it('when a relative path is given, then it resolves against the topic base directory', async () => {
    await b.run('rel', '/open ~/apps');
    expect((await b.run('rel', '/install weather --as relw')).body.split('\n')[0]).toBe('Installed app:relw (local, 3 files; 2 symlinks skipped) from ~/apps/weather');
  });
});

describe('/packages and /uninstall (behaviour.md §7.7)', () => {
  it('when packages exist, then /packages lists name, type, mode, version and source, padded', async () => {
    const r = await b.run('main', '/packages');
    const lines = r.body.split('\n');
    expect(lines[0]).toMatch(/^Packages \(\d+\)$/);
    expect(lines[1]).toBe('---');
    expect(lines).toContain('  weather       app   local    0.3.0  ~/apps/weather');
    expect(lines).toContain('  todolink      app   inplace  -      ~/notes/todo.md');
    expect(lines[lines.length - 1]).toBe('next: /open app:<name> · /uninstall <name>');
    expect((await b.run('main', '/packages x')).body).toBe('ERROR(INVALID_ARGS): Usage: /packages');
  });

  it('when a local package is uninstalled, then its folder and record go, sessions lose its document, its variables stay', async () => {
    await b.run('app:weather', '/open');
    await b.run('other', '/open app:weather/pages/more.md');
    await b.run('app:weather', '/set $UNITS = "metric"');
    const r = await b.run('main', '/uninstall weather');
    expect(r.body).toBe('Uninstalled app:weather (removed ~/packages/weather)');
    expect(existsSync(join(b.home, 'packages/weather'))).toBe(false);
    expect(reg().packages.weather).toBeUndefined();
    expect((await b.run('other', '/info')).body).toContain('document:  (none)');
    expect((await b.run('app:weather', '/refresh')).body).toBe('ERROR(INVALID_TARGET): No document open.');
    const env = JSON.parse(readFileSync(join(b.t.dataDir, 'agents/leo/state/env.json'), 'utf8'));
    expect(env.apps.weather.vars.UNITS).toBe('metric');
  });

  it('when the name is unknown, missing or malformed, then the errors of §7.7', async () => {
    expect((await b.run('main', '/uninstall weather')).body).toBe('ERROR(NOT_FOUND): Package not found: weather\nRecovery: /packages');
    expect((await b.run('main', '/uninstall ../x')).body).toBe('ERROR(NOT_FOUND): Package not found: ../x\nRecovery: /packages');
    expect((await b.run('main', '/uninstall')).body).toBe('ERROR(INVALID_ARGS): Usage: /uninstall <name>');
    expect((await b.run('main', '/uninstall a b')).body).toBe('ERROR(INVALID_ARGS): Usage: /uninstall <name>');
  });

  it('when nothing is installed, then /packages says so', async () => {
    const other = await b.agent('empty');
    expect((await other.run('main', '/packages')).body).toBe('Packages (0)\n---\n  (none)\nnext: /install <source>');
  });
});
