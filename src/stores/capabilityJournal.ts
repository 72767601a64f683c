import type { CapabilityRecord } from '../domain/capability.js';
import { readFileIfExists } from '../effects/atomicFile.js';
import { fileErrorText, RegistryReadError } from './jsonAdapter.js';

/**
 * The capability journal `<data>/capabilities.journal.jsonl` (docs/decisions/0001): one JSON object
 * per line, `{"op":"add","record":{…}}` for a mint and `{"op":"set","token_id":…,"patch":{…}}` for a
 * state change, appended after the snapshot `capabilities.json` was last written.
 */

/** One journal line. */
export type JournalOp =
  | { op: 'add'; record: CapabilityRecord }
  | { op: 'set'; token_id: string; patch: Partial<Pick<CapabilityRecord, 'state' | 'used_at' | 'revoked_at'>> };

/**
 * The lines of the journal, numbered from 1, blank ones left out. A last line without its newline is
 * a write a crash cut (never acknowledged: the answer waits for the fdatasync) and is left out. A
 * journal that cannot be read throws RegistryReadError.
 */
export function journalLines(path: string): Array<{ no: number; text: string }> {
  let text: string | undefined;
  try {
    text = readFileIfExists(path);
  } catch (err) {
    throw new RegistryReadError(path, fileErrorText(err));
  }
  if (!text) return [];
  const lines = text.split('\n');
  const torn = lines.pop();
  if (torn !== '' && torn !== undefined) process.emitWarning(`${path}: left out a cut last line (a write interrupted by a crash)`);
  return lines.map((t, i) => ({ no: i + 1, text: t })).filter((l) => l.text !== '');
}

/**
 * The operations of the journal's lines in order; a line that is not a valid operation stops the
 * daemon (behaviour.md §1.1: never reset silently).
 */
export function journalOps(path: string, lines: Array<{ no: number; text: string }>, parse: (line: string) => JournalOp | null): JournalOp[] {
  return lines.map((l) => {
    const op = parse(l.text);
    if (!op) throw new RegistryReadError(path, `damaged line ${l.no}`);
    return op;
  });
}
