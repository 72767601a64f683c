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

const STATES = new Set(['live', 'consumed', 'expired', 'revoked']);
const nullableText = (v: unknown) => v === undefined || v === null || typeof v === 'string';

function parse(line: string, wellFormed: (r: unknown) => r is CapabilityRecord): JournalOp | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o.op === 'add' && wellFormed(o.record)) return { op: 'add', record: o.record };
  if (o.op !== 'set' || typeof o.token_id !== 'string' || typeof o.patch !== 'object' || o.patch === null) return null;
  const p = o.patch as Record<string, unknown>;
  if ((p.state !== undefined && !STATES.has(String(p.state))) || !nullableText(p.used_at) || !nullableText(p.revoked_at)) return null;
  const patch: JournalOp & { op: 'set' } = { op: 'set', token_id: o.token_id, patch: {} };
  if (p.state !== undefined) patch.patch.state = p.state as CapabilityRecord['state'];
  if (p.used_at !== undefined) patch.patch.used_at = p.used_at as string | null;
  if (p.revoked_at !== undefined) patch.patch.revoked_at = p.revoked_at as string | null;
  return patch;
}

/**
 * The operations of the journal in order. A last line without its newline is a write a crash cut
 * (never acknowledged: the answer waits for the fdatasync) and is left out; any other line that is
 * not a valid operation stops the daemon (behaviour.md §1.1: never reset silently).
 */
export function readJournal(path: string, wellFormed: (r: unknown) => r is CapabilityRecord): JournalOp[] {
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
  const ops: JournalOp[] = [];
  lines.forEach((line, i) => {
    if (line === '') return;
    const op = parse(line, wellFormed);
    if (!op) throw new RegistryReadError(path, `damaged line ${i + 1}`);
    ops.push(op);
  });
  return ops;
}
