import { describe, expect, it, jest } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PackageRecord } from '../../src/domain/ports.js';
import { commitPackage, createStaging, sweepPackages } from '../../src/effects/install/staging.js';
import { RegistryReadError } from '../../src/stores/jsonAdapter.js';
import { FilePackageStore } from '../../src/stores/packages.js';
import { tempDir } from '../helpers/daemon.js';
import { hashTree, leftovers, writeTree } from './support.js';

/** The package registry (behaviour.md §7.6) and the crash rules of the commit and start-up recovery. */

const rec = (name: string, extra: Partial<PackageRecord> = {}): PackageRecord => ({
  name, type: 'app', mode: 'local', uri: `file:///h/packages/${name}/string.md`, source: `~/src/${name}`, installedAt: '2025-06-01T10:00:00.000Z', ...extra,
});

describe('packages.json (behaviour.md §7.6) on lowdb', () => {
  it('when records are put and removed, then the file holds {version: 1, packages} and a fresh store reads it back', () => {
    const data = tempDir();
    const s = new FilePackageStore(data);
    s.put('leo', rec('weather', { version: '0.3.0', files: 4, installId: 'ins_0123456789abcdef' }));
    s.put('leo', rec('alpha'));
    expect(s.remove('leo', 'alpha')).toBe(true);
    expect(s.remove('leo', 'alpha')).toBe(false);
    const file = JSON.parse(readFileSync(join(data, 'agents/leo/state/packages.json'), 'utf8'));
    expect(file).toEqual({ version: 1, packages: { weather: rec('weather', { version: '0.3.0', files: 4, installId: 'ins_0123456789abcdef' }) } });
    expect(new FilePackageStore(data).list('leo')).toEqual([rec('weather', { version: '0.3.0', files: 4, installId: 'ins_0123456789abcdef' })]);
  });

  it('when a hand-edited file holds unusable entries, then they are skipped with a warning and the rest is kept', () => {
    const data = tempDir();
    const file = join(data, 'agents/leo/state/packages.json');
    mkdirSync(join(file, '..'), { recursive: true });
    // A real "__proto__" key, as JSON.parse makes it (an object literal would set the prototype instead).
    const proto = JSON.stringify(rec('__proto__'));
    writeFileSync(file, JSON.stringify({ version: 1, packages: {
      good: rec('good'), renamed: rec('other'), weird: rec('weird', { mode: 'copy' as never }), PROTO: 0, 'a.b': rec('a.b'), files: rec('files', { files: -1 }),
    } }).replace('"PROTO":0', `"__proto__":${proto}`));
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const s = new FilePackageStore(data);
      expect(s.list('leo').map((r) => r.name)).toEqual(['good']);
      expect(s.get('leo', 'constructor')).toBeUndefined();
      expect(warn).toHaveBeenCalledTimes(5);
    } finally {
      warn.mockRestore();
    }
  });

  it('when the file is not JSON or has no packages object, then reading it throws RegistryReadError (the daemon stops)', () => {
    const data = tempDir();
    const file = join(data, 'agents/leo/state/packages.json');
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, '{"version": 1, "packages": ');
    expect(() => new FilePackageStore(data).list('leo')).toThrow(RegistryReadError);
    expect(() => new FilePackageStore(data).list('leo')).toThrow(`cannot read ${file}: `);
    writeFileSync(file, '{"version": 1, "packages": []}');
    expect(() => new FilePackageStore(data).list('leo')).toThrow(`cannot read ${file}: missing "packages" object`);
  });

  it('when two commits take the lock, then the second starts after the first; whenIdle waits for both', async () => {
    const s = new FilePackageStore(tempDir());
    const order: string[] = [];
    let release: () => void = () => undefined;
    const first = s.withLock('leo', async () => { order.push('a+'); await new Promise<void>((r) => { release = r; }); order.push('a-'); });
    const second = s.withLock('leo', async () => { order.push('b'); });
    const idle = s.whenIdle('leo').then(() => order.push('idle'));
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['a+']);
    release();
    await Promise.all([first, second, idle]);
    expect(order).toEqual(['a+', 'a-', 'b', 'idle']);
  });
});

/** A home with an installed package `weather` (v1) and a staging folder with v2. */
function world(): { home: string; v1: string; v2: string; staging: string } {
  const home = tempDir();
  writeTree(join(home, 'packages/weather'), { 'string.md': '# v1\n', 'old.md': 'old' });
  const v1 = hashTree(join(home, 'packages/weather'));
  const staging = createStaging(home, 'weather', 'aaaaaaaa');
  writeTree(staging, { 'string.md': '# v2\n', 'new/page.md': 'new' });
  return { home, v1, v2: hashTree(staging), staging };
}
const hexOf = (h: string | null | undefined) => ({ installHex: () => h });

describe('commit (behaviour.md §7.6)', () => {
  it('when the commit succeeds, then the new tree is in place, registered, and nothing is left over', async () => {
    const { home, v2, staging } = world();
    let registered = false;
    await commitPackage({ home, name: 'weather', hex: 'aaaaaaaa', staging, replaceFolder: false, register: () => { registered = true; } });
    expect(registered).toBe(true);
    expect(hashTree(join(home, 'packages/weather'))).toBe(v2);
    expect(leftovers(home)).toEqual([]);
  });

  it('when the registry write fails, then the old package is back, the new tree is at its staging path, and the error is thrown', async () => {
    const { home, v1, v2, staging } = world();
    await expect(commitPackage({ home, name: 'weather', hex: 'aaaaaaaa', staging, replaceFolder: false, register: () => { throw new Error('disk full'); } })).rejects.toThrow('disk full');
    expect(hashTree(join(home, 'packages/weather'))).toBe(v1);
    expect(hashTree(staging)).toBe(v2);
    expect(leftovers(home)).toEqual(['.staging-weather-aaaaaaaa']);
  });
});

describe('start-up recovery of each commit window (behaviour.md §7.6: leftovers removed at start-up)', () => {
  it('when the crash came after the old folder moved aside (A–B), then the old package is restored', () => {
    const { home, v1 } = world();
    renameSync(join(home, 'packages/weather'), join(home, 'packages/.old-weather-aaaaaaaa'));
    expect(sweepPackages(home, hexOf('bbbbbbbb'))).toEqual(['restored ~/packages/weather (an interrupted install was undone)']);
    expect(hashTree(join(home, 'packages/weather'))).toBe(v1);
    expect(leftovers(home)).toEqual([]);
  });

  it('when the new folder was in place but not registered (B–C), then the old package is restored', () => {
    const { home, v1, staging } = world();
    renameSync(join(home, 'packages/weather'), join(home, 'packages/.old-weather-aaaaaaaa'));
    renameSync(staging, join(home, 'packages/weather'));
    sweepPackages(home, hexOf('bbbbbbbb'));
    expect(hashTree(join(home, 'packages/weather'))).toBe(v1);
    expect(leftovers(home)).toEqual([]);
  });

  it('when the record was written (C–D), then the new package stays and the old folder goes', () => {
    const { home, v2, staging } = world();
    renameSync(join(home, 'packages/weather'), join(home, 'packages/.old-weather-aaaaaaaa'));
    renameSync(staging, join(home, 'packages/weather'));
    expect(sweepPackages(home, hexOf('aaaaaaaa'))).toEqual([]);
    expect(hashTree(join(home, 'packages/weather'))).toBe(v2);
    expect(leftovers(home)).toEqual([]);
  });

  it('when a first install crashed before its record (marker .new-), then its folder goes; after the record, it stays', () => {
    const home = tempDir();
    writeTree(join(home, 'packages/fresh'), { 'string.md': '# fresh\n' });
    mkdirSync(join(home, 'packages/.new-fresh-cccccccc'));
    sweepPackages(home, hexOf(undefined));
    expect(existsSync(join(home, 'packages/fresh'))).toBe(false);
    writeTree(join(home, 'packages/fresh'), { 'string.md': '# fresh\n' });
    mkdirSync(join(home, 'packages/.new-fresh-cccccccc'));
    sweepPackages(home, hexOf('cccccccc'));
    expect(existsSync(join(home, 'packages/fresh/string.md'))).toBe(true);
    expect(leftovers(home)).toEqual([]);
  });

  it('when an uninstall crashed before or after removing the record, then the package is back or gone', () => {
    const { home, v1 } = world();
    renameSync(join(home, 'packages/weather'), join(home, 'packages/.old-weather-dddddddd'));
    sweepPackages(home, hexOf(null));
    expect(hashTree(join(home, 'packages/weather'))).toBe(v1);
    renameSync(join(home, 'packages/weather'), join(home, 'packages/.old-weather-dddddddd'));
    sweepPackages(home, hexOf(undefined));
    expect(existsSync(join(home, 'packages/weather'))).toBe(false);
    expect(leftovers(home)).toEqual([]);
  });

  it('when staging folders are left, then they go; other dot entries and a missing ~/packages are fine', () => {
    const { home } = world();
    writeTree(join(home, 'packages/.cache'), { x: 'keep' });
    sweepPackages(home, hexOf(undefined));
    expect(leftovers(home)).toEqual([]);
    expect(readFileSync(join(home, 'packages/.cache/x'), 'utf8')).toBe('keep');
    expect(sweepPackages(tempDir(), hexOf(undefined))).toEqual([]);
  });
});
