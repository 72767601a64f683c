import { lstatSync, readdirSync, rmSync, statSync, unlinkSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { UNDO_FOLDER } from '../effects/undoCopies.js';

/**
 * Temp files of interrupted atomic writes, which would otherwise pile up with every crash.
 * Every atomic write of daemon state names its temp file
 * `.<file>.<8 hex>.tmp` beside the file (src/effects/atomicFile.ts, the one atomic writer); no
 * such file outlives a clean write, so at start-up, before anything is written, every one found in
 * the data directory and in the agents' state folders is removed. Homes are never looked into.
 */

const TEMP_RE = /^\..+\.[0-9a-f]{8}\.tmp$/;

/**
 * Which agents had a state folder at start-up (`<data>/<root>/<id>/state`), learnt by the leftover
 * scan that lists them anyway. The start-up probes for files in a state folder (inbox log,
 * package registry) ask it first: most agents never get a state folder, and a probe per file
 * per agent would be a large share of a cold start with many agents. Valid only until the first
 * write, which the start-up order guarantees (nothing writes before the features are built).
 */
export interface StateFolders {
  /** False when the agent's state folder did not exist (ENOENT) at start-up; true otherwise, also when it could not be read. */
  has(agentId: string): boolean;
  /**
   * True when `<data>/agents` and `<data>/agents/<id>` are both real folders, not links (from the
   * same listing): the registry's check of a default home then only needs to look at the home.
   */
  plainAgentFolder(agentId: string): boolean;
}

/**
 * Remove leftovers in one folder; returns how many, or null when the folder does not exist. In an
 * agent's state folder (`state`) that includes the undo copies of the sessions of an earlier run
 * (effects/undoCopies.ts): sessions do not survive a restart, nor do their undo records.
 */
function removeIn(dir: string, state = false): number | null {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    // A file where the folder should be: not ours to judge here; the state readers report it in one line.
    if (code === 'ENOTDIR') return 0;
    throw err;
  }
  let n = 0;
  for (const name of names) {
    if (state && name === UNDO_FOLDER) {
      rmSync(join(dir, name), { recursive: true, force: true });
      continue;
    }
    if (!TEMP_RE.test(name)) continue;
    try {
      unlinkSync(join(dir, name));
      n++;
    } catch (err) {
      // A folder with that name is not ours to remove; anything else is a real problem.
      if ((err as NodeJS.ErrnoException).code !== 'EISDIR' && (err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
    }
  }
  return n;
}

/** The entries under `<data>/<root>` (none when it does not exist). */
function idsUnder(dataDir: string, root: string): Dirent[] {
  try {
    return readdirSync(join(dataDir, root), { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return [];
  }
}

/**
 * Remove leftover temp files from `<data>` and every `<data>/agents/<id>/state` (and
 * `<data>/<stateRoot>/<id>/state` on a wire that keeps its state elsewhere); returns how many were
 * removed and which of `stateRoot`'s ids have a state folder.
 */
export function removeLeftoverTemps(dataDir: string, stateRoot: 'agents' | 'users' = 'agents'): { removed: number; stateFolders: StateFolders } {
  let removed = removeIn(dataDir) ?? 0;
  const present = new Set<string>();
  const plain = new Set<string>();
  // readdir follows a link at `<data>/agents`; its entries count as plain only when it is none.
  const agentsPlain = lstatSync(join(dataDir, 'agents'), { throwIfNoEntry: false })?.isDirectory() === true;
  for (const root of stateRoot === 'agents' ? ['agents'] : ['agents', stateRoot]) {
    for (const entry of idsUnder(dataDir, root)) {
      const id = entry.name;
      if (root === 'agents' && agentsPlain && entry.isDirectory()) plain.add(id);
      const state = join(dataDir, root, id, 'state');
      // In a folder, a missing state folder can only be ENOENT, learnt without building an exception
      // (a failing readdir spends most of its time on its error object; most agents have no state folder).
      if (entry.isDirectory() && statSync(state, { throwIfNoEntry: false }) === undefined) continue;
      const n = removeIn(state, true);
      if (n === null) continue;
      removed += n;
      if (root === stateRoot) present.add(id);
    }
  }
  return { removed, stateFolders: { has: (id) => present.has(id), plainAgentFolder: (id) => plain.has(id) } };
}
