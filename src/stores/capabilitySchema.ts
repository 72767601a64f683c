import { z } from 'zod';
import { CAPABILITY_STATES, type CapabilityRecord } from '../domain/capability.js';
import type { JournalOp } from './capabilityJournal.js';
import { parseJsonLine } from './jsonAdapter.js';

/*
 * The shapes of the capability files as zod schemas. Imported on demand by CapabilityStore.open,
 * only when there is a record or a journal to read, so that a daemon without capabilities never
 * loads zod (docs/architecture.md, "Resident memory"; docs/decisions/0101-zod-record-validators.md).
 */

/** A stored record; unknown fields are kept as written (the snapshot is rewritten from these objects). */
const recordSchema = z.looseObject({
  token_id: z.string(),
  agent_id: z.string(),
  path_prefix: z.string(),
  verbs: z.array(z.unknown()),
  ttl_ms: z.number(),
  single_use: z.boolean(),
  state: z.enum(CAPABILITY_STATES),
  created_at: z.string(),
  expires_at: z.string(),
  secret_sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

/** A state change: only these three fields, each optional; the times may be null. */
const patchSchema = z.object({
  state: z.enum(CAPABILITY_STATES).optional(),
  used_at: z.string().nullable().optional(),
  revoked_at: z.string().nullable().optional(),
});

const journalOpSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('add'), record: recordSchema }),
  z.object({ op: z.literal('set'), token_id: z.string(), patch: patchSchema }),
]);

/** A record as read from disk is usable (a hand-edited or damaged entry must stop the daemon, not pass silently). */
export function wellFormed(r: unknown): r is CapabilityRecord {
  return recordSchema.safeParse(r).success;
}

/** One journal line as an operation, or null when it is not JSON or not a valid operation. */
export function parseJournalLine(line: string): JournalOp | null {
  const r = journalOpSchema.safeParse(parseJsonLine(line));
  return r.success ? (r.data as JournalOp) : null;
}
