import { chmod, copyFile } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { installError } from '../../domain/install.js';
import { INSTALL_FILE_BYTES, INSTALL_MAX_FILES, INSTALL_TOTAL_BYTES } from '../../domain/limits.js';

/**
 * Local sources (behaviour.md §7.2): a folder's whole tree (entries whose name starts with `.`
 * skipped, symlinks skipped and counted, file modes kept) under the limits of §1.8, and the text
 * checks of a package root.
 */

/** One regular file of a local folder. */
export interface LocalFile {
  /** Path inside the package, `/`-separated. */
  rel: string;
  abs: string;
  size: number;
  /** Permission bits (the executable bit is kept). */
  mode: number;
}

/** A folder ready to copy. */
export interface LocalTree {
  files: LocalFile[];
  symlinksSkipped: number;
}

const MIB = 1048576;

/** behaviour.md §7.4 step 5: the root must be UTF-8 text (and, like every document, hold no NUL byte). */
export function rootText(buf: Buffer): string {
  if (!isUtf8(buf) || buf.includes(0)) throw installError('string.md is not UTF-8 text');
  return buf.toString('utf8');
}

/** Read a local file that becomes a package root (≤ 5 MiB, UTF-8). */
export function readRootFile(abs: string, display: string): Buffer {
  const st = statSync(abs);
  if (st.size > INSTALL_FILE_BYTES) throw installError(`${display} is larger than ${INSTALL_FILE_BYTES / MIB} MiB`);
  const buf = readFileSync(abs);
  rootText(buf);
  return buf;
}

/** True when `dir` holds a regular file `string.md` (not a symlink: symlinks are skipped). */
export function hasRoot(dir: string): boolean {
  try {
    return lstatSync(join(dir, 'string.md')).isFile();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * List a folder for a copy (behaviour.md §7.2): it must hold `string.md`; dot entries and symlinks
 * are skipped (symlinks counted), other special files ignored; at most 500 files of at most 5 MiB,
 * 50 MiB in all. Sorted by path so the copy order does not depend on the file system.
 */
export function walkFolder(root: string, display: string): LocalTree {
  if (!hasRoot(root)) throw installError(`No string.md in ${display}`);
  const tree: LocalTree = { files: [], symlinksSkipped: 0 };
  let total = 0;
  const visit = (dir: string, prefix: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const abs = join(dir, e.name);
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isSymbolicLink()) tree.symlinksSkipped++;
      else if (e.isDirectory()) visit(abs, rel);
      else if (e.isFile()) {
        const st = statSync(abs);
        if (st.size > INSTALL_FILE_BYTES) throw installError(`${display}/${rel} is larger than ${INSTALL_FILE_BYTES / MIB} MiB`);
        total += st.size;
        if (total > INSTALL_TOTAL_BYTES) throw installError(`Package is larger than ${INSTALL_TOTAL_BYTES / MIB} MiB`);
        tree.files.push({ rel, abs, size: st.size, mode: st.mode & 0o777 });
        if (tree.files.length > INSTALL_MAX_FILES) throw installError(`${display} has more than ${INSTALL_MAX_FILES} files`);
      }
    }
  };
  visit(root, '');
  tree.files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return tree;
}

/** Copy one file into the staging folder, keeping its permission bits. */
export async function copyLocalFile(f: LocalFile, dest: string): Promise<void> {
  await copyFile(f.abs, dest);
  await chmod(dest, f.mode);
}
