import { describe, expect, it } from '@jest/globals';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentStore } from '../../src/domain/ports.js';
import { LowAgentStore } from '../../src/stores/agentStore.js';
import { RegistryReadError } from '../../src/stores/jsonAdapter.js';
import { tempDir } from '../helpers/temp.js';

const rec = (id: string) => ({ id, home: `/h/${id}`, allowedPaths: [], createdAt: '2025-06-01T10:00:00.000Z' });

/** One conformance suite for every AgentStore implementation (architecture.md). */
describe.each([
  ['memory', async () => LowAgentStore.memory()],
  ['lowdb file', async () => LowAgentStore.open(tempDir())],
])('AgentStore conformance: %s', (_name, make: () => Promise<AgentStore>) => {
  const get = (s: AgentStore, id: string) => s.list().find((a) => a.id === id);

  it('put, list sorted by id, remove', async () => {
    const s = await make();
    await s.put(rec('zed'));
    await s.put(rec('amy'));
    expect(get(s, 'amy')).toEqual(rec('amy'));
    expect(s.list().map((a) => a.id)).toEqual(['amy', 'zed']);
    expect(await s.remove('amy')).toBe(true);
    expect(await s.remove('amy')).toBe(false);
    expect(get(s, 'amy')).toBeUndefined();
  });

  it('when a profile is stored again, then the stored webhook token is kept; a token of an unknown agent is refused', async () => {
    const s = await make();
    await s.put(rec('amy'));
    await s.putWebhookToken('amy', `wh_${'a'.repeat(43)}`);
    await s.put({ ...rec('amy'), home: '/h/new' });
    expect(get(s, 'amy')).toEqual({ ...rec('amy'), home: '/h/new', webhookToken: `wh_${'a'.repeat(43)}` });
    await expect(s.putWebhookToken('nobody', `wh_${'b'.repeat(43)}`)).rejects.toThrow('unknown agent nobody');
  });

  it('never treats inherited object keys as agents', async () => {
    const s = await make();
    await s.put(rec('amy'));
    expect(s.list().map((a) => a.id)).toEqual(['amy']);
    expect(await s.remove('constructor')).toBe(false);
    expect(await s.remove('__proto__')).toBe(false);
    await expect(s.putWebhookToken('constructor', `wh_${'a'.repeat(43)}`)).rejects.toThrow();
  });

  it('concurrent puts all land', async () => {
    const s = await make();
    await Promise.all(Array.from({ length: 20 }, (_, i) => s.put(rec(`a${i}`))));
    expect(s.list()).toHaveLength(20);
  });
});

describe('LowAgentStore file', () => {
  it('persists across reopen with mode 0600 and no temp files left', async () => {
    const dir = tempDir();
    const s = await LowAgentStore.open(dir);
    await s.put(rec('leo'));
    const again = await LowAgentStore.open(dir);
    expect(again.list()).toEqual([rec('leo')]);
    expect(statSync(join(dir, 'agents.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, 'agents.json'), 'utf8'))).toEqual({ version: 1, agents: { leo: rec('leo') } });
  });

  it.each(['not json', '[]', '{"version":1}'])('refuses to open an unreadable registry (%s) instead of resetting it', async (text) => {
    const dir = tempDir();
    writeFileSync(join(dir, 'agents.json'), text);
    await expect(LowAgentStore.open(dir)).rejects.toBeInstanceOf(RegistryReadError);
    expect(readFileSync(join(dir, 'agents.json'), 'utf8')).toBe(text);
  });
});
