import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PARTS, TARGETS, readManifest, sourcesHash } from '../../scripts/nativeSources.mjs';

/*
 * behaviour.md §17: the package carries the native parts prebuilt for linux-x64 and linux-arm64,
 * made from the very sources it ships. A change to native/ or binding.gyp without `npm run prebuilds`
 * fails here (the install step would build locally where it can, and ship stale parts where not).
 */
interface Manifest { sources: string; 'node-pty': string; targets: Record<string, { glibc: Record<string, string | null> }> }

const root = process.cwd();
const manifest = readManifest(root) as Manifest | null;
/** ELF e_machine of each target: x86-64 and AArch64. */
const MACHINE: Record<string, number> = { 'linux-x64': 0x3e, 'linux-arm64': 0xb7 };

describe('the prebuilt native parts (prebuilds/, npm run prebuilds)', () => {
  it('when the sources are hashed as the install step hashes them, then the manifest names the same sources (else: npm run prebuilds)', () => {
    expect(manifest).not.toBeNull();
    expect({ sources: manifest?.sources }).toEqual({ sources: sourcesHash(root) });
  });

  it('when node-pty\'s pinned version is read from the lockfile, then the prebuilt binding was made from it', () => {
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
    expect(manifest?.['node-pty']).toBe(lock.packages['node_modules/node-pty'].version);
  });

  it.each(TARGETS)('when %s is read, then every part is there, an ELF of that machine, needing glibc 2.34 at most', (target) => {
    for (const part of PARTS) {
      const file = join(root, 'prebuilds', target, part.file);
      expect({ part: part.name, exists: existsSync(file) }).toEqual({ part: part.name, exists: true });
      const head = readFileSync(file).subarray(0, 20);
      expect(head.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
      expect({ part: part.name, machine: head.readUInt16LE(18) }).toEqual({ part: part.name, machine: MACHINE[target] });
      // ET_DYN (3): shared objects and position-independent executables alike.
      expect(head.readUInt16LE(16)).toBe(3);
      const glibc = manifest?.targets[target].glibc[part.name];
      expect(glibc === null || glibc === undefined ? true : Number(glibc.split('.')[1]) <= 34).toBe(true);
    }
  });
});
