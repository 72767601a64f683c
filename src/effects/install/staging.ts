import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isInsideReal } from '../workspace.js';

/**
 * The package folders of behaviour.md §7.6: `~/packages/<name>/`, staging in
 * `~/packages/.staging-<name>-<hex>/`, and the commit: rename an existing folder to
 * `~/packages/.old-<name>-<hex>/` (or, when there is none, leave an empty `.new-<name>-<hex>`
 * marker), rename staging into place, update the registry, delete the old folder (or marker). The
 * registry write is the commit point; the record carries the install id, so start-up recovery
 * (`sweepPackages`) can tell a finished commit from an interrupted one and put the old folder back.
 */

/** `~/packages` of a home. */
export const packagesDir = (home: string): string => join(home, 'packages');
/** The folder of an installed package. */
export const packageDir = (home: string, name: string): string => join(packagesDir(home), name);
/** The staging folder of one install. */
export const stagingDir = (home: string, name: string, hex: string): string => join(packagesDir(home), `.staging-${name}-${hex}`);

/** Create the staging folder (and `~/packages` when missing). */
export function createStaging(home: string, name: string, hex: string): string {
  mkdirSync(packagesDir(home), { recursive: true, mode: 0o755 });
  const dir = stagingDir(home, name, hex);
  mkdirSync(dir, { mode: 0o755 });
  return dir;
}

/** Remove a folder and everything in it (missing is fine). */
export async function removeTree(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/**
 * Test hook (never set in production): pause this many ms between the commit's steps, so a
 * black-box test can `kill -9` the daemon inside each window of the commit.
 */
function pauseMs(): number {
  const v = Number(process.env.LOOM_TEST_COMMIT_PAUSE_MS ?? '');
  return Number.isFinite(v) && v > 0 ? v : 0;
}
const between = async () => {
  const ms = pauseMs();
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
};

/** What a commit changes. */
export interface CommitPlan {
  home: string;
  name: string;
  /** The install's folder hex (behaviour.md §7.6 `<8 hex>`). */
  hex: string;
  /** The staging folder to move into place, or null (link and in-place packages have no folder). */
  staging: string | null;
  /** Move the existing `~/packages/<name>/` aside (and delete it) even without a new folder. */
  replaceFolder: boolean;
  /** The registry update: the commit point. Throws when it cannot be written. */
  register(): void;
}

/**
 * Commit an install (behaviour.md §7.6). Call it holding the agent's package lock. On failure
 * everything is put back (the new folder returns to its staging path for the caller's wipe) and
 * the error is rethrown; the installed package and the registry are untouched.
 */
export async function commitPackage(p: CommitPlan): Promise<void> {
  const dir = packageDir(p.home, p.name);
  const old = join(packagesDir(p.home), `.old-${p.name}-${p.hex}`);
  const marker = join(packagesDir(p.home), `.new-${p.name}-${p.hex}`);
  const hadFolder = existsSync(dir) && (p.staging !== null || p.replaceFolder);
  if (hadFolder) renameSync(dir, old);
  else if (p.staging !== null) mkdirSync(marker);
  const undo = () => {
    if (hadFolder) renameSync(old, dir);
    else rmSync(marker, { recursive: true, force: true });
  };
  try {
    await between();
    if (p.staging !== null) renameSync(p.staging, dir);
  } catch (err) {
    undo();
    throw err;
  }
  try {
    await between();
    p.register();
  } catch (err) {
    if (p.staging !== null) renameSync(dir, p.staging);
    undo();
    throw err;
  }
  await between();
  if (hadFolder) await removeTree(old);
  else rmSync(marker, { recursive: true, force: true });
}

/**
 * Why `/uninstall` must not remove `~/packages/<name>`, or null (behaviour.md §7.7): a `~/packages`
 * that resolves outside the home (a link), or a folder that holds the source of another package
 * registered in place. Real paths on both sides (isInsideReal), whatever symlink the home is reached by.
 */
export function removalRefusal(home: string, name: string, others: ReadonlyArray<{ name: string; mode: string; uri: string }>): string | null {
  if (!isInsideReal(packagesDir(home), home)) return '~/packages resolves outside the home; nothing was removed';
  const dir = packageDir(home, name);
  for (const o of others) {
    if (o.name === name || o.mode !== 'inplace' || !o.uri.startsWith('file:')) continue;
    if (isInsideReal(fileURLToPath(o.uri), dir)) return `~/packages/${name} holds the source of ${o.name}, installed in place; uninstall ${o.name} first`;
  }
  return null;
}

/**
 * Remove a local package's folder with the same crash rules as a commit (behaviour.md §7.7):
 * rename aside, `unregister()` (the commit point), delete.
 */
export async function removePackage(p: { home: string; name: string; hex: string; unregister(): void }): Promise<boolean> {
  const dir = packageDir(p.home, p.name);
  const old = join(packagesDir(p.home), `.old-${p.name}-${p.hex}`);
  const had = existsSync(dir);
  if (had) renameSync(dir, old);
  try {
    p.unregister();
  } catch (err) {
    if (had) renameSync(old, dir);
    throw err;
  }
  if (had) await removeTree(old);
  return had;
}

const LEFTOVER = /^\.(old|new)-([A-Za-z0-9][A-Za-z0-9_-]{0,63})-([0-9a-f]{8})$/;

/**
 * Start-up recovery of `~/packages` (behaviour.md §7.6): finish or undo interrupted commits, then
 * remove every `.staging-*`. `committed(name, hex)` tells whether the registry holds the record of
 * that install (for an `.old-` folder a missing record also counts: an uninstall got that far).
 * Returns one line per repaired package.
 */
export function sweepPackages(home: string, registry: { installHex(name: string): string | null | undefined }): string[] {
  const root = packagesDir(home);
  let names: string[];
  try {
    // Missing and "not a folder above it" end the same way here, so a plain probe will do: isAbsent
    // tells them apart by walking up on Node 22 and 24, a second call per agent at every start.
    if (statSync(root, { throwIfNoEntry: false }) === undefined) return [];
    names = readdirSync(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw err;
  }
  const out: string[] = [];
  for (const entry of names) {
    const m = LEFTOVER.exec(entry);
    if (!m) continue;
    const [, kind, name, hex] = m;
    const rec = registry.installHex(name);
    const dir = join(root, name);
    const done = kind === 'old' ? rec === undefined || rec === hex : rec === hex;
    if (!done) {
      rmSync(dir, { recursive: true, force: true });
      if (kind === 'old') renameSync(join(root, entry), dir);
      out.push(kind === 'old' ? `restored ~/packages/${name} (an interrupted install was undone)` : `removed ~/packages/${name} (an interrupted install was undone)`);
    }
    rmSync(join(root, entry), { recursive: true, force: true });
  }
  for (const entry of readdirSync(root)) {
    if (entry.startsWith('.staging-')) rmSync(join(root, entry), { recursive: true, force: true });
  }
  return out;
}
