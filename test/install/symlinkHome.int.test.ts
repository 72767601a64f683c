import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, realpathSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { writeTree } from './support.js';

/**
 * Containment checks compare real paths on both sides (behaviour.md §7.7): an agent whose home is
 * reached through a symlink cannot link a package from inside ~/packages, and `/uninstall` never
 * removes what another package or a folder outside the home depends on.
 */
let t: TestApp;
let root: string;
let home: string;
let run: (cmd: string) => Promise<string>;

beforeAll(async () => {
  t = await startApp();
  root = realpathSync(tempDir());
  mkdirSync(join(root, 'real-home'));
  symlinkSync(join(root, 'real-home'), join(root, 'home'));
  home = join(root, 'home');
  const leo = t.client('leo');
  expect((await leo.registerAgent({ agent_id: 'leo', home })).status).toBe(200);
  run = async (cmd) => (await leo.exec('main', cmd)).body ?? '';
  writeTree(home, { 'srcb/string.md': '# B\n', 'srcc/string.md': '# C\n', 'x/string.md': '# X\n' });
});
afterAll(async () => {
  await t?.close();
  rmSync(root, { recursive: true, force: true });
  rmSync(t.dataDir, { recursive: true, force: true });
});

describe('a home reached through a symlink', () => {
  it('when a folder inside ~/packages is installed with --link, then INSTALL_FAILED, as for any home', async () => {
    expect(await run('/install ~/srcb --as foo')).toMatch(/^Installed app:foo \(local, 1 file\)/);
    expect(await run('/install ~/packages/foo --link --as bar')).toBe('ERROR(INSTALL_FAILED): Cannot install in place from inside ~/packages; install it without --link');
    // By its real path too.
    expect(await run(`/install ${join(root, 'real-home/packages/foo')} --link --as bar`)).toBe('ERROR(INSTALL_FAILED): Cannot install in place from inside ~/packages; install it without --link');
    expect(await run('/uninstall foo')).toBe('Uninstalled app:foo (removed ~/packages/foo)');
  });

  it('when a package installed in place has its source inside another package folder, then uninstalling that package is refused', async () => {
    expect(await run('/install ~/srcc --as holder')).toMatch(/^Installed app:holder/);
    expect(await run('/install ~/x --link --as linked')).toMatch(/^Installed app:linked in place/);
    // The in-place source is swapped for a link into ~/packages/holder after the install.
    rmSync(join(home, 'x'), { recursive: true });
    symlinkSync(join(home, 'packages/holder'), join(home, 'x'));
    expect(await run('/uninstall holder')).toBe('ERROR(INSTALL_FAILED): ~/packages/holder holds the source of linked, installed in place; uninstall linked first');
    expect(existsSync(join(home, 'packages/holder/string.md'))).toBe(true);
    expect(await run('/uninstall linked')).toMatch(/^Uninstalled app:linked/);
    expect(await run('/uninstall holder')).toBe('Uninstalled app:holder (removed ~/packages/holder)');
  });

  it('when ~/packages is a link to a folder outside the home, then /uninstall removes nothing', async () => {
    expect(await run('/install ~/srcb --as gone')).toMatch(/^Installed app:gone/);
    const outside = join(root, 'outside');
    renameSync(join(home, 'packages'), outside);
    symlinkSync(outside, join(home, 'packages'));
    expect(await run('/uninstall gone')).toBe('ERROR(INSTALL_FAILED): ~/packages resolves outside the home; nothing was removed');
    expect(existsSync(join(outside, 'gone/string.md'))).toBe(true);
  });
});
