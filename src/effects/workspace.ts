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
      return join(realpathSync(cur), ...missing.reverse());
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

/**
 * The workspace policy of behaviour.md §1.4: expand `~`, make absolute against the base directory,
 * resolve symlinks of the longest existing prefix, then compare segment-wise with the realpath of
 * the home and of each allowed path. Returns null when the path is outside the workspace (callers
 * answer `ERROR(FORBIDDEN): Path outside the workspace: <display path>`). NUL bytes are the
 * caller's INVALID_PATH check.
 */
export function resolveInWorkspace(agent: AgentRecord, base: string | null, input: string): WorkspacePath | null {
  const abs = expandPath(input, agent.home, base ?? agent.home);
  const real = realpathPrefix(abs);
  const roots = [agent.home, ...agent.allowedPaths].map((r) => realpathPrefix(resolve(r)));
  if (!roots.some((r) => isInside(real, r))) return null;
  return { abs: real, display: displayOf(abs, agent.home) };
}
