import { readdirSync, unlinkSync } from 'node:fs';
import { isAbsent } from '../effects/fileProbe.js';
import { join } from 'node:path';

/**
 * Temp files of interrupted atomic writes (issue 12, defect 10: `.agents.json.*.tmp` piled up to
 * 478 KB after 12 crashes). Every atomic write of daemon state names its temp file
 * `.<file>.<8 hex>.tmp` beside the file (src/effects/atomicFile.ts, the one atomic writer); no
 * such file outlives a clean write, so at start-up, before anything is written, every one found in
 * the data directory and in the agents' state folders is removed. Homes are never looked into.
 */

const TEMP_RE = /^\..+\.[0-9a-f]{8}\.tmp$/;

function removeIn(dir: string): number {
  let n = 0;
  let names: string[];
  try {
    if (isAbsent(dir)) return 0;
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return 0;
    throw err;
  }
  for (const name of names) {
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

/** Remove leftover temp files from `<data>` and `<data>/agents/<id>/state`; returns how many. */
export function removeLeftoverTemps(dataDir: string): number {
  let n = removeIn(dataDir);
  let agents: string[] = [];
  try {
    agents = readdirSync(join(dataDir, 'agents'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  for (const id of agents) n += removeIn(join(dataDir, 'agents', id, 'state'));
  return n;
}
