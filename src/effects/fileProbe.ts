import { statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Whether `statSync(…, {throwIfNoEntry: false})` answers undefined for ENOTDIR too (Node 22 and 24
 * do; Node 20 throws), asked once of a path below this Node's own executable file.
 */
const undefinedForNotDir = ((): boolean => {
  try {
    return statSync(`${process.execPath}/x`, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
})();

/**
 * True when nothing is at `path` (ENOENT), learnt without building an exception. Start-up probes
 * one path per registered agent for files most agents never have (state folder, inbox log, package
 * registry, ~/packages); a throwing open or readdir spends most of its time building the error
 * object, which adds up over a large registry's cold start. Any other error still throws, so
 * callers keep telling a file in the way (ENOTDIR) from a missing one.
 */
export function isAbsent(path: string): boolean {
  if (statSync(path, { throwIfNoEntry: false }) !== undefined) return false;
  if (!undefinedForNotDir) return true;
  // This Node answers undefined for ENOTDIR as for ENOENT. The nearest existing ancestor tells them
  // apart: a folder means ENOENT; anything else, and the throwing call reports the real error.
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const st = statSync(dir, { throwIfNoEntry: false });
    if (st !== undefined) {
      if (st.isDirectory()) return true;
      statSync(path);
      return false;
    }
    if (dirname(dir) === dir) return true;
  }
}
