import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WIRES, type WireName } from '../domain/wire.js';

/**
 * The content a file had before an edit, kept for `/undo` (behaviour.md §2.5) in the agent's state
 * folder rather than in the session: a session holds only the copy's path (domain/session.ts
 * `UndoRef`), so topic memory stays small and plain data whatever the files weigh.
 *
 * Layout: `<data>/<stateRoot>/<id>/state/undo/<session id>/<sha256 of the file's real path>.<random>`:
 * each edit's copy has a name of its own, so a failed edit never overwrites the copy the file's
 * earlier record points at (the caller drops the earlier copy once the edit is done). Undo records live as long as
 * their session (behaviour.md §1.3), so these copies are never read after a restart: the session's
 * folder is removed when the session ends, the whole `undo` folder at start-up
 * (stores/leftovers.ts) and with the state folder when the agent is deleted. For the same reason a
 * copy is written plainly (no fsync, no rename): a copy cut short by a crash is never read.
 */

/** The name of the folder of undo copies in an agent's state folder. */
export const UNDO_FOLDER = 'undo';

/** Where the daemon keeps the state of `agentId` and the wire it serves. */
export interface UndoPlace {
  dataDir: string;
  wire: WireName;
  agentId: string;
  sessionId: number;
}

/** The folder of one session's undo copies. */
export function sessionUndoFolder(p: UndoPlace): string {
  return join(p.dataDir, WIRES[p.wire].stateRoot, p.agentId, 'state', UNDO_FOLDER, String(p.sessionId));
}

/** Keep `bytes` as the copy of `path` before an edit (mode 0600: a file's content may be a secret); returns the copy's path. */
export function keepUndoCopy(p: UndoPlace, path: string, bytes: Buffer): string {
  const folder = sessionUndoFolder(p);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const copy = join(folder, `${createHash('sha256').update(path).digest('hex')}.${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(copy, bytes, { mode: 0o600 });
  } catch (err) {
    // A copy cut short must not stay where /undo would read it.
    rmSync(copy, { force: true });
    throw err;
  }
  return copy;
}

/** The bytes of a copy, or null when it is gone (its agent's state folder removed by hand). */
export function readUndoCopy(copy: string): Buffer | null {
  try {
    return readFileSync(copy);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Remove one copy (used or replaced by an edit that cannot be undone). */
export function dropUndoCopy(copy: string): void {
  try {
    unlinkSync(copy);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** A session ended: remove its copies. */
export function dropSessionUndo(p: UndoPlace): void {
  rmSync(sessionUndoFolder(p), { recursive: true, force: true });
}
