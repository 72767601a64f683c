import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep, basename, join } from 'node:path';
import type { AgentRecord } from '../domain/ports.js';

/** A path that passed the workspace policy. */
export interface WorkspacePath {
  /** Absolute path as resolved (symlinks of the existing prefix resolved). */
  abs: string;
  /** Display form (behaviour.md §1.4): `~/…` inside the home, else absolute. */
  display: string;
}

/** Realpath of the longest existing prefix of `abs`, with the missing rest appended. */
export function realpathPrefix(abs: string): string {
  const missing: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      // realpath(3) in one call: the JS realpathSync lstat()s every segment, which costs more per home.
      return join(realpathSync.native(cur), ...missing.reverse());
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      const parent = dirname(cur);
      if (parent === cur) return abs;
      missing.push(basename(cur));
      cur = parent;
    }
  }
}

/** True when `p` is `root` or inside it, compared segment-wise (no sibling-prefix tricks). */
export function isInside(p: string, root: string): boolean {
  if (p === root) return true;
  return p.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * True when `child` is `parent` or inside it, both compared by their real paths (realpathPrefix:
 * the nearest existing ancestor resolved, the part not yet created appended). Every containment
 * check of a path against a home, `~/packages` or the data directory goes through this: a home
 * reached through a symlink must not make one side resolved and the other not.
 */
export function isInsideReal(child: string, parent: string): boolean {
  return isInside(realpathPrefix(child), realpathPrefix(parent));
}

/** Display of a path (behaviour.md §1.4): inside the home `~/<relative>` (the home itself `~`). */
export function displayOf(abs: string, home: string): string {
  if (abs === home) return '~';
  if (isInside(abs, home)) return '~/' + abs.slice(home.replace(/\/+$/, '').length + 1);
  return abs;
}

/** Expand `~` and make `input` absolute against `base` (behaviour.md §1.4). */
export function expandPath(input: string, home: string, base: string): string {
  if (input === '~') return home;
  if (input.startsWith('~/')) return resolve(home, input.slice(2));
  return isAbsolute(input) ? resolve(input) : resolve(base, input);
}

/** Longest name and path the file system takes (Linux NAME_MAX, PATH_MAX - 1), in bytes. */
export const NAME_MAX_BYTES = 255;
export const PATH_MAX_BYTES = 4095;

/**
 * Why an absolute path can never name a file, or null: a NUL byte, a name over 255 bytes, a path
 * over 4095 bytes, so such a path gets a clear refusal instead of a file system error reported as
 * INTERNAL_ERROR. Pure: checked before any system call.
 */
export function pathShapeProblem(abs: string): 'nul' | 'name' | 'path' | null {
  if (abs.includes('\0')) return 'nul';
  if (Buffer.byteLength(abs) > PATH_MAX_BYTES) return 'path';
  return abs.split('/').some((seg) => Buffer.byteLength(seg) > NAME_MAX_BYTES) ? 'name' : null;
}

/** The message of a path that cannot be used (behaviour.md §1.6 INVALID_PATH texts). */
export function pathProblemText(problem: 'nul' | 'name' | 'path' | 'loop', display: string): string {
  if (problem === 'nul') return 'Path contains a NUL character';
  if (problem === 'name') return `Name too long: ${display}`;
  if (problem === 'path') return `Path too long: ${display}`;
  return `Too many levels of symbolic links: ${display}`;
}

/** A path the policy refused: outside the workspace (FORBIDDEN) or unusable (INVALID_PATH). */
export interface PathRefusal {
  refused: 'outside' | 'invalid';
  display: string;
  /** The error message (behaviour.md §1.4 FORBIDDEN text, or an INVALID_PATH text). */
  message: string;
  /** What made an invalid path invalid. */
  problem?: 'nul' | 'name' | 'path' | 'loop';
}

/** The realpath of the longest existing prefix, or the problem that stopped the lookup. */
function realOrProblem(abs: string): string | 'loop' | 'path' {
  try {
    return realpathPrefix(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return 'loop';
    // A symlink may resolve to a longer path than the one given.
    if (code === 'ENAMETOOLONG') return 'path';
    throw err;
  }
}

/**
 * The workspace policy of behaviour.md §1.4: expand `~`, make absolute against the base directory,
 * resolve symlinks of the longest existing prefix, then compare segment-wise with the realpath of
 * the home and of each allowed path. A path the file system cannot take (NUL, over-long name or
 * path, symlink loop) is refused as invalid before it is compared.
 */
export function resolveInWorkspace(agent: AgentRecord, base: string | null, input: string): WorkspacePath | PathRefusal {
  const abs = expandPath(input, agent.home, base ?? agent.home);
  const display = displayOf(abs, agent.home);
  const invalid = (problem: 'nul' | 'name' | 'path' | 'loop'): PathRefusal => ({ refused: 'invalid', display, problem, message: pathProblemText(problem, display) });
  const shape = pathShapeProblem(abs);
  if (shape) return invalid(shape);
  const real = realOrProblem(abs);
  if (real === 'loop' || real === 'path') return invalid(real);
  const roots = [agent.home, ...agent.allowedPaths].map((r) => realOrProblem(resolve(r)));
  if (!roots.some((r) => r !== 'loop' && r !== 'path' && isInside(real, r))) return { refused: 'outside', display, message: `Path outside the workspace: ${display}` };
  return { abs: real, display };
}

/** True for a refusal of resolveInWorkspace. */
export function isRefusal(r: WorkspacePath | PathRefusal): r is PathRefusal {
  return 'refused' in r;
}
