import { join } from 'node:path';
import { isFileRefusal } from '../domain/agentFile.js';
import type { AgentRecord } from '../domain/ports.js';
import { readAgentFile, writeTargetKind } from './agentFile.js';
import { writeFileAtomic } from './atomicFile.js';
import { displayOf, expandPath, isInsideReal, isRefusal, realpathPrefix, resolveInWorkspace } from './workspace.js';

/**
 * Files Loom reads or writes on an action's behalf (behaviour.md §1.4): `--<field>-file` values
 * (§5.4), body modifiers `file`/`base64file` (§4.5) and template `to:` (§4.12). Paths: `~` and
 * relative → home; the workspace policy applies.
 */

/** A read that passed or failed the checks. */
export type ActionFileRead =
  | { ok: true; data: Buffer; display: string }
  | { ok: false; kind: 'forbidden' | 'unreadable' | 'tooLarge'; display: string; reason?: string; size?: number };

/** behaviour.md §5.4-style reasons for paths the file system cannot take. */
const PROBLEM_REASON = { nul: 'no such file', name: 'name too long', path: 'path too long', loop: 'too many levels of symbolic links' } as const;

/** behaviour.md §16: reasons of a refused read, in the words of §5.4. */
const REFUSAL_REASON = { missing: 'no such file', directory: 'is a directory', not_regular: 'not a regular file' } as const;

/** Text of a read error as behaviour.md §5.4 names it. */
function reasonOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENAMETOOLONG') return 'name too long';
  if (code === 'ELOOP') return 'too many levels of symbolic links';
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return (err as Error).message;
}

/** Read a file named by an action value, at most `limit` bytes. */
export function readActionFile(agent: AgentRecord, input: string, limit: number): ActionFileRead {
  const display = displayOf(expandPath(input, agent.home, agent.home), agent.home);
  if (input.includes('\0')) return { ok: false, kind: 'unreadable', display, reason: 'no such file' };
  const wp = resolveInWorkspace(agent, agent.home, input);
  if (isRefusal(wp)) {
    if (wp.refused === 'outside') return { ok: false, kind: 'forbidden', display };
    return { ok: false, kind: 'unreadable', display, reason: PROBLEM_REASON[wp.problem ?? 'path'] };
  }
  try {
    const r = readAgentFile(wp.abs, limit);
    if (!isFileRefusal(r)) return { ok: true, data: r.data, display };
    if (r.refused === 'too_large') return { ok: false, kind: 'tooLarge', display, size: r.size };
    return { ok: false, kind: 'unreadable', display, reason: REFUSAL_REASON[r.refused] };
  } catch (err) {
    return { ok: false, kind: 'unreadable', display, reason: reasonOf(err) };
  }
}

/** behaviour.md §4.5: the modifier reader (10 MiB, same path rules). */
export function readModifierFile(agent: AgentRecord, input: string, limit: number): { ok: true; data: Buffer } | { ok: false; forbidden: boolean; display: string; reason: string } {
  const r = readActionFile(agent, input, limit);
  if (r.ok) return { ok: true, data: r.data };
  if (r.kind === 'tooLarge') return { ok: false, forbidden: false, display: r.display, reason: `too large: ${r.size} bytes (limit ${limit})` };
  return { ok: false, forbidden: r.kind === 'forbidden', display: r.display, reason: r.reason ?? '' };
}

/**
 * A template `to:` write (behaviour.md §4.12). Local documents may write anywhere in the workspace;
 * remote documents only inside the home and never under `~/packages`. Returns a warning line or null.
 */
export function writeActionFile(agent: AgentRecord, local: boolean, input: string, data: Buffer): string | null {
  const abs = expandPath(input, agent.home, agent.home);
  const display = displayOf(abs, agent.home);
  if (input.trim() === '' || input.includes('\0')) return `warning: to: write failed: invalid path "${input}"`;
  if (local) {
    const wp = resolveInWorkspace(agent, agent.home, input);
    if (isRefusal(wp)) return wp.refused === 'outside' ? `warning: to: refused: ${display} is outside the workspace` : `warning: to: write failed: ${PROBLEM_REASON[wp.problem ?? 'path']}`;
  } else {
    const real = realpathPrefix(abs);
    if (!isInsideReal(real, agent.home) || real === realpathPrefix(agent.home) || isInsideReal(real, join(agent.home, 'packages'))) {
      return 'warning: to: refused: remote documents may write only inside the home, outside ~/packages';
    }
  }
  try {
    const kind = writeTargetKind(realpathPrefix(abs));
    if (kind === 'directory') return 'warning: to: write failed: is a directory';
    if (kind === 'other') return 'warning: to: write failed: not a regular file';
    // A user file: the usual modes (0666/0777 less the umask), written by the one atomic writer.
    writeFileAtomic(realpathPrefix(abs), data, { mode: 0o666, dirMode: 0o777 });
    return null;
  } catch (err) {
    return `warning: to: write failed: ${reasonOf(err)}`;
  }
}
