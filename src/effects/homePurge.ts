import { rmdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve, sep } from 'node:path';
import { LoomError, errorMessage } from '../domain/errors.js';

/** What `DELETE /agents/{id}?purge=1[&force=1]` knows of the home it is asked to delete. */
export interface PurgeRequest {
  agentId: string;
  home: string;
  /** `<data>/agents/<id>/home`: the home the daemon made (null on a wire without default homes). */
  defaultHome: string | null;
  force: boolean;
}

/** True when `a` is `b` or a folder above it. */
const holds = (a: string, b: string) => a === b || b.startsWith(a.endsWith(sep) ? a : a + sep);

/**
 * Why the home must not be deleted, as the refusal the route answers with; null when it may
 * (behaviour.md §17). The daemon's own default home may go; a home the user chose only with
 * force; never `/` or a folder that holds the user's home folder, force or not.
 */
export function purgeRefusal(r: PurgeRequest): LoomError | null {
  const home = resolve(r.home);
  if (holds(home, resolve(homedir()))) {
    return new LoomError(409, 'Home cannot be purged', { message: `${home} is / or holds the user's home folder; delete the agent without purge` });
  }
  if (r.defaultHome !== null && home === resolve(r.defaultHome)) return null;
  if (!r.force) {
    return new LoomError(409, 'Home was chosen at registration', { message: `${home} is not the agent's default home; to delete it as well add force=1 (loom agent rm ${r.agentId} --purge --force)` });
  }
  return null;
}

/**
 * Delete the home (links inside are removed, never followed), then the agent's folder of the data
 * directory when the home was its default one and nothing else is left in it.
 */
export function purgeHome(r: PurgeRequest): void {
  try {
    rmSync(r.home, { recursive: true, force: true });
  } catch (err) {
    throw new LoomError(500, 'Home not purged', { message: `the agent was deleted, but ${r.home} could not be removed: ${errorMessage(err)}` });
  }
  if (r.defaultHome !== null && resolve(r.home) === resolve(r.defaultHome)) {
    try {
      rmdirSync(dirname(r.defaultHome));
    } catch {
      // Not empty (something else lives beside the home) or already gone: it stays.
    }
  }
}
