import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { CapabilityService } from '../../src/services/capabilities.js';
import { AgentDirectory } from '../../src/actors/directory.js';
import { ActorTree } from '../../src/actors/tree.js';
import { loadConfig } from '../../src/config.js';
import { compose } from '../../src/daemon.js';
import { CapabilityStore } from '../../src/stores/capabilityStore.js';
import { RegistryReadError } from '../../src/stores/jsonAdapter.js';
import { tempDir } from '../helpers/temp.js';

const T0 = Date.parse('2025-06-01T10:00:00.000Z');
const DAY = 86_400_000;

/**
 * A service over the file store in `dir`, on a simulated clock at `now`, with its capabilities in a
 * real actor tree (one agent, `leo`): the store is under test, the actors are the runtime's own.
 */
async function service(dir: string, now: number) {
  const clock = new SimulatedClock();
  clock.set(now);
  const store = await CapabilityStore.open(dir, now);
  const tree = new ActorTree();
  const leo = { id: 'leo', home: dir, allowedPaths: [], createdAt: new Date(now).toISOString() };
  const directory = new AgentDirectory(tree, [leo], (agentId, ref, at) => ({ agentId, ref, maxWaiting: 5, waitMs: 120_000, now: at }));
  const svc = new CapabilityService({ store, clock, directory });
  tree.start({
    clock, run: () => Promise.reject(new Error('no commands here')), dispose: () => undefined, cascade: async (_id, counts) => counts, persist: () => Promise.reject(new Error('no registrations here')),
    features: { archiveCapability: svc.archiveEnd },
  });
  svc.hydrate();
  return { svc: Object.assign(svc, { stopAll: () => tree.root.stop() }), clock, store };
}

const spec = (over: Partial<{ singleUse: boolean; ttlMs: number }> = {}) => ({ pathPrefix: '', verbs: ['GET' as const], ttlMs: over.ttlMs ?? 60_000, singleUse: over.singleUse ?? false });

describe('<data>/capabilities.json (behaviour.md §1.1)', () => {
  it('when a capability is minted, then the journal (and, after a restart, the file) holds only the SHA-256 hex of the secret, mode 0600', async () => {
    const dir = tempDir();
    const { svc, store } = await service(dir, T0);
    const m = await svc.mint('leo', spec());
    // A mint is one journal line (no whole-file rewrite per mint); the snapshot gets it at the next start.
    const journal = readFileSync(join(dir, 'capabilities.journal.jsonl'), 'utf8');
    expect(journal).not.toContain(m.secret);
    expect(journal).not.toContain(m.secret.slice(5));
    expect(JSON.parse(journal.trim()).record.secret_sha256).toBe(createHash('sha256').update(m.secret).digest('hex'));
    expect(statSync(join(dir, 'capabilities.journal.jsonl')).mode & 0o777).toBe(0o600);
    svc.stopAll();
    await store.close();
    await service(dir, T0);
    const text = readFileSync(join(dir, 'capabilities.json'), 'utf8');
    expect(text).not.toContain(m.secret);
    expect(JSON.parse(text).capabilities[0].secret_sha256).toBe(createHash('sha256').update(m.secret).digest('hex'));
    expect(statSync(join(dir, 'capabilities.json')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'capabilities.journal.jsonl'), 'utf8')).toBe('');
  });

  it('when the service restarts, then a live token still verifies and a consumed one stays dead', async () => {
    const dir = tempDir();
    const first = await service(dir, T0);
    const live = await first.svc.mint('leo', spec());
    const once = await first.svc.mint('leo', spec({ singleUse: true }));
    const v = first.svc.verify(once.secret);
    if (!v.ok) throw new Error('not granted');
    await v.grant.succeed();
    first.svc.stopAll();
    const second = await service(dir, T0 + 1000);
    expect(second.svc.verify(live.secret).ok).toBe(true);
    expect(second.svc.verify(once.secret)).toEqual({ ok: false, reason: 'consumed' });
    expect(second.svc.list('leo').map((c) => c.state)).toEqual(['live', 'consumed']);
    second.svc.stopAll();
  });

  it('when the ttl passes while the daemon is down, then the token is expired after the restart', async () => {
    const dir = tempDir();
    const first = await service(dir, T0);
    const m = await first.svc.mint('leo', spec({ ttlMs: 5000 }));
    first.svc.stopAll();
    const second = await service(dir, T0 + 5000);
    expect(second.svc.verify(m.secret)).toEqual({ ok: false, reason: 'expired' });
    expect(second.svc.list('leo')[0].state).toBe('expired');
    const third = await service(dir, T0 + 6000);
    expect(third.svc.list('leo')[0].state).toBe('expired');
  });

  it('when a dead record is older than 7 days at start-up, then it is dropped from the file', async () => {
    const dir = tempDir();
    const first = await service(dir, T0);
    await first.svc.mint('leo', spec({ ttlMs: 1000 }));
    const keep = await first.svc.mint('leo', spec({ ttlMs: 30 * DAY }));
    first.clock.increment(1000);
    first.svc.stopAll();
    await service(dir, T0 + 1000 + 7 * DAY + 1);
    const ids = JSON.parse(readFileSync(join(dir, 'capabilities.json'), 'utf8')).capabilities.map((r: { token_id: string }) => r.token_id);
    expect(ids).toEqual([keep.token_id]);
  });

  it.each([
    ['{not json', /^cannot read .*capabilities\.json: /],
    ['{"version":1}', /missing "capabilities" array/],
    ['[]', /missing "capabilities" array/],
    ['{"version":1,"capabilities":[{"token_id":"cap_x"}]}', /malformed record at index 0/],
    ['{"version":1,"capabilities":[{"token_id":"cap_x","agent_id":"a","path_prefix":"","verbs":["GET"],"ttl_ms":1,"single_use":false,"state":"alive","created_at":"x","expires_at":"x","secret_sha256":"00"}]}', /malformed record/],
  ])('when the file holds %s, then opening throws RegistryReadError (never reset silently)', async (content, message) => {
    const dir = tempDir();
    writeFileSync(join(dir, 'capabilities.json'), content);
    await expect(CapabilityStore.open(dir, T0)).rejects.toThrow(RegistryReadError);
    await expect(CapabilityStore.open(dir, T0)).rejects.toThrow(message);
    expect(readFileSync(join(dir, 'capabilities.json'), 'utf8')).toBe(content);
  });

  it('when the daemon is composed over an unreadable file, then compose throws RegistryReadError', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'capabilities.json'), '{oops');
    await expect(compose(loadConfig({ SVC_DATA_DIR: dir, SVC_PORT: '1' }), { memory: true })).rejects.toThrow(RegistryReadError);
  });
});
