import { lstatSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { LoomError } from '../domain/errors.js';
import { isInside, pathProblemText, pathShapeProblem, realpathPrefix } from './workspace.js';

/**
 * The agent home policy (behaviour.md §1.4). A workspace root (the home
 * or an allowed path) may not be, contain or lie inside the data directory: agents.json holds every
 * webhook token and the state folders hold env stores, so a root that reaches them would hand them
 * to /fs capabilities and file commands. The one exception is the agent's own default home
 * `<data>/agents/<id>/home` (and folders in it). A home that cannot be a folder is refused as well,
 * before anything is created.
 */

/** What POST /agents asks for, checked before any change. */
export interface AgentRoots {
  dataDir: string;
  agentId: string;
  home?: string;
  allowedPaths?: string[];
  /**
   * False on a wire without default homes (the user wire, behaviour.md §11): then no folder inside
   * the data directory is allowed — not even an agent's default home, which a user must never share.
   */
  defaultHomes?: boolean;
  /** The data directory's real path, when the caller checks many records at once (the registry at start-up). */
  dataReal?: string;
  /**
   * The registry at start-up, when the data directory's listing showed `<data>/agents` and
   * `<data>/agents/<id>` as real folders (not links): a stored home that is, as written, the
   * agent's own default home `<data>/agents/<id>/home` is checked by one lstat of the home instead
   * of a full realpath (realpath(3) reads every segment's link from the root, a large share of a
   * cold start with many agents). When the home is no link either, its real path is the
   * data directory's own plus those segments, which the policy allows; a link falls back to the
   * full check.
   */
  storedDefaultHome?: boolean;
}

/** Refuse unusable or data-directory-overlapping roots: 400 `Invalid home` / `Invalid allowed_paths`. */
export function checkAgentRoots(r: AgentRoots): void {
  if (r.home !== undefined) checkRoot(r, r.home, 'Invalid home');
  for (const p of r.allowedPaths ?? []) checkRoot(r, p, 'Invalid allowed_paths');
}

/** The short reason of a file-system error code, as a user reads it. */
function reasonOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  const known: Record<string, string> = {
    EACCES: 'permission denied', EPERM: 'permission denied', ENOENT: 'no such file or directory', EROFS: 'read-only file system',
    ENOSPC: 'no space left on device', ENOTDIR: 'not a directory', EEXIST: 'not a directory', ELOOP: 'too many levels of symbolic links',
    ENAMETOOLONG: 'name too long', EDQUOT: 'disk quota exceeded',
  };
  return (code !== undefined && Object.hasOwn(known, code) ? known[code] : undefined) ?? (err as Error).message;
}

function checkRoot(r: AgentRoots, raw: string, error: string): void {
  const abs = resolve(raw);
  const refuse = (message: string): never => { throw new LoomError(400, error, { message }); };
  const shape = pathShapeProblem(abs);
  if (shape) refuse(pathProblemText(shape, abs));
  if (error === 'Invalid home' && r.storedDefaultHome === true && r.defaultHomes !== false && abs === resolve(r.dataDir, 'agents', r.agentId, 'home')) {
    const plain = unlinkedDefaultHome(abs);
    if (plain === 'folder') return;
    if (plain === 'missing') {
      const blocker = nonDirectoryAncestor(abs);
      if (blocker) refuse(`${blocker} is not a directory`);
      return;
    }
  }
  let real = '';
  try {
    real = realpathPrefix(abs);
  } catch (err) {
    refuse(`Cannot resolve ${abs}: ${reasonOf(err)}`);
  }
  // realpath(3), as for the roots (workspace.ts) and the registry load: one answer for both sides.
  const data = r.dataReal ?? realpathSync.native(r.dataDir);
  if (real === data) refuse(`${abs} is the Loom data directory`);
  if (isInside(data, real)) refuse(`${abs} contains the Loom data directory ${r.dataDir}`);
  const ownDefault = r.defaultHomes === false ? null : join(data, 'agents', r.agentId, 'home');
  if (isInside(real, data) && (ownDefault === null || !isInside(real, ownDefault))) refuse(`${abs} is inside the Loom data directory ${r.dataDir}`);
  if (error === 'Invalid home') {
    const blocker = nonDirectoryAncestor(abs);
    if (blocker) refuse(`${blocker} is not a directory`);
  }
}

/**
 * How a default home whose parents are known to be real folders stands, by one lstat: `folder`,
 * `missing` (absent or not a folder: the file-in-the-way check decides) or `link` (the full check
 * decides).
 */
function unlinkedDefaultHome(home: string): 'folder' | 'missing' | 'link' {
  const st = lstatSync(home, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) return 'link';
  return st?.isDirectory() ? 'folder' : 'missing';
}

/** The nearest existing path at or above `abs` when it is not a folder (a file in the way), else null. */
function nonDirectoryAncestor(abs: string): string | null {
  for (let cur = abs; ; cur = dirname(cur)) {
    try {
      return statSync(cur).isDirectory() ? null : cur;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Missing, or a file further up (ENOTDIR): keep climbing to the nearest existing entry.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return null;
    }
    if (dirname(cur) === cur) return null;
  }
}

/**
 * Create a home folder (mode 0700) one segment at a time from its nearest existing ancestor.
 * Node's recursive mkdir loops for ever where a file system answers ENOENT for a folder that
 * exists (procfs), which would hang the daemon; a failure is a 400 `Invalid home`.
 */
export function createHome(home: string): void {
  const missing: string[] = [];
  let cur = home;
  for (;;) {
    try {
      if (statSync(cur).isDirectory()) break;
      throw new LoomError(400, 'Invalid home', { message: `${cur} is not a directory` });
    } catch (err) {
      if (err instanceof LoomError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(cur) === cur) throw new LoomError(400, 'Invalid home', { message: `Cannot create ${home}: ${reasonOf(err)}` });
      missing.push(cur);
      cur = dirname(cur);
    }
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && statSync(dir).isDirectory()) continue;
      throw new LoomError(400, 'Invalid home', { message: `Cannot create ${home}: ${reasonOf(err)}` });
    }
  }
}
