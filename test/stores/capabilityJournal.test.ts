import { describe, expect, it } from '@jest/globals';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CapabilityRecord } from '../../src/domain/capability.js';
import { CapabilityStore } from '../../src/stores/capabilityStore.js';
import { RegistryReadError } from '../../src/stores/jsonAdapter.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A mint or a state change appends one journal line, whatever the number of records, instead of
 * rewriting the whole capabilities.json (docs/decisions/0001); the journal is folded into the snapshot at start-up and once it is as long as the
 * record list. (Latency itself is measured by `npm run bench -- reliability`, never asserted here.)
 */

const T0 = Date.parse('2025-06-01T10:00:00.000Z');
let n = 0;
const rec = (over: Partial<CapabilityRecord> = {}): CapabilityRecord => {
  const i = n++;
  return {
    token_id: `cap_${String(i).padStart(16, '0')}`, agent_id: 'leo', path_prefix: '', verbs: ['GET'], ttl_ms: 3_600_000, single_use: false,
    state: 'live', created_at: new Date(T0).toISOString(), expires_at: new Date(T0 + 3_600_000).toISOString(), used_at: null, revoked_at: null,
    secret_sha256: i.toString(16).padStart(64, '0'), ...over,
  };
};
const journalLines = (dir: string) => readFileSync(join(dir, 'capabilities.journal.jsonl'), 'utf8').split('\n').filter(Boolean);

describe('capability journal', () => {
  it('when 1,500 capabilities exist, then one more mint appends one journal line and leaves capabilities.json untouched', async () => {
    const dir = tempDir();
    const store = await CapabilityStore.open(dir, T0);
    await Promise.all(Array.from({ length: 1500 }, () => store.add(rec(), T0)));
    await store.close();
    const again = await CapabilityStore.open(dir, T0);
    expect(again.list(T0)).toHaveLength(1500);
    const before = statSync(join(dir, 'capabilities.json'));
    const r = rec();
    await again.add(r, T0);
    await again.update(r.token_id, { state: 'revoked', revoked_at: new Date(T0).toISOString() }, T0);
    const after = statSync(join(dir, 'capabilities.json'));
    expect([after.ino, after.mtimeMs, after.size]).toEqual([before.ino, before.mtimeMs, before.size]);
    expect(journalLines(dir).map((l) => JSON.parse(l).op)).toEqual(['add', 'set']);
    expect(again.get(r.token_id)?.state).toBe('revoked');
    await again.close();
  });

  it('when the journal reaches the record count (at least 1,024 lines), then it is folded into the snapshot', async () => {
    const dir = tempDir();
    const store = await CapabilityStore.open(dir, T0);
    for (let k = 0; k < 11; k++) await Promise.all(Array.from({ length: 100 }, () => store.add(rec(), T0)));
    await store.close();
    expect(journalLines(dir).length).toBeLessThan(1024);
    expect((JSON.parse(readFileSync(join(dir, 'capabilities.json'), 'utf8')) as { capabilities: unknown[] }).capabilities.length).toBeGreaterThanOrEqual(1024);
    expect((await CapabilityStore.open(dir, T0)).list(T0)).toHaveLength(1100);
  });

  it('when a crash left journal lines the snapshot already holds, then replaying them changes nothing (idempotent)', async () => {
    const dir = tempDir();
    const store = await CapabilityStore.open(dir, T0);
    const a = rec();
    await store.add(a, T0);
    await store.update(a.token_id, { state: 'consumed', used_at: new Date(T0).toISOString() }, T0);
    await store.close();
    const journal = readFileSync(join(dir, 'capabilities.journal.jsonl'), 'utf8');
    await (await CapabilityStore.open(dir, T0)).close();
    writeFileSync(join(dir, 'capabilities.journal.jsonl'), journal);
    const replayed = await CapabilityStore.open(dir, T0);
    expect(replayed.list(T0)).toEqual([{ ...a, state: 'consumed', used_at: new Date(T0).toISOString() }]);
    await replayed.close();
  });

  it('when the last journal line was cut by a crash, then it is left out; a damaged earlier line stops the start', async () => {
    const dir = tempDir();
    const store = await CapabilityStore.open(dir, T0);
    const a = rec();
    await store.add(a, T0);
    await store.close();
    appendFileSync(join(dir, 'capabilities.journal.jsonl'), '{"op":"add","record":{"token_id":"cap_');
    const opened = await CapabilityStore.open(dir, T0);
    expect(opened.list(T0).map((r) => r.token_id)).toEqual([a.token_id]);
    await opened.close();
    writeFileSync(join(dir, 'capabilities.journal.jsonl'), 'garbage\n' + JSON.stringify({ op: 'add', record: rec() }) + '\n');
    await expect(CapabilityStore.open(dir, T0)).rejects.toThrow(RegistryReadError);
    await expect(CapabilityStore.open(dir, T0)).rejects.toThrow(`cannot read ${join(dir, 'capabilities.journal.jsonl')}: damaged line 1`);
  });
});
