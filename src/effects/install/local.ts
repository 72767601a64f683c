import { chmod, writeFile } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isFileRefusal, notRegularText, type AgentFileRead } from '../../domain/agentFile.js';
import { installError } from '../../domain/install.js';
import { INSTALL_FILE_BYTES, INSTALL_MAX_FILES, INSTALL_TOTAL_BYTES } from '../../domain/limits.js';
import { readAgentFile, readAgentFileAsync } from '../agentFile.js';

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
  /** How errors name it (`~/src/a.md`). */
  display: string;
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

/**
 * The bytes of a bounded read, or the install error of its refusal (behaviour.md §16: anything but a
 * regular file is `INVALID_PATH not a regular file`, as for every command).
 */
function bytesOf(r: AgentFileRead, display: string): Buffer {
  if (!isFileRefusal(r)) return r.data;
  if (r.refused === 'too_large') throw installError(`${display} is larger than ${INSTALL_FILE_BYTES / MIB} MiB`);
  if (r.refused === 'not_regular') throw installError(notRegularText(display), 'INVALID_PATH');
  if (r.refused === 'directory') throw installError(`Is a directory: ${display}`, 'INVALID_PATH');
  throw installError(`Cannot read ${display}: no such file`);
}

/** Read a local file that becomes a package root (≤ 5 MiB, UTF-8). */
export function readRootFile(abs: string, display: string): Buffer {
  const buf = bytesOf(readAgentFile(abs, INSTALL_FILE_BYTES), display);
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
        tree.files.push({ rel, abs, display: `${display}/${rel}`, size: st.size, mode: st.mode & 0o777 });
        if (tree.files.length > INSTALL_MAX_FILES) throw installError(`${display} has more than ${INSTALL_MAX_FILES} files`);
      }
    }
  };
  visit(root, '');
  tree.files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return tree;
}

/**
 * Copy one file into the staging folder, keeping its permission bits. Read through the bounded
 * reader, not copyFile: a file swapped for a FIFO since the walk would hold a pool thread forever.
 */
export async function copyLocalFile(f: LocalFile, dest: string): Promise<void> {
  const data = bytesOf(await readAgentFileAsync(f.abs, INSTALL_FILE_BYTES), f.display);
  await writeFile(dest, data, { flag: 'wx', mode: 0o600 });
  await chmod(dest, f.mode);
}
