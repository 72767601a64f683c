import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventRecord } from '../../src/domain/events.js';
import { systemClock } from '../../src/domain/ports.js';
import { LowAgentStore } from '../../src/stores/agentStore.js';
import { FileInbox } from '../../src/stores/inbox.js';
import { defaultLogHandles, LogHandles } from '../../src/stores/logHandles.js';
import { TextCache } from '../../src/stores/textCache.js';
import { tempDir } from '../helpers/temp.js';

/**
 * At the store level: log descriptors are a bounded pool, texts live on
 * disk behind an index (read back after appends, acks, compactions and restarts), and registry
 * changes are applied only after they are written.
 */

const opened: FileInbox[] = [];
afterEach(async () => { await Promise.all(opened.splice(0).map((i) => i.closeAll())); });
const inboxAt = (dir: string, handles?: LogHandles) => { const i = new FileInbox(dir, systemClock, handles); opened.push(i); return i; };
const addLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { op: string; event: { text: string; status: string } });

describe('log descriptors', () => {
  it('when 30 agents receive events with a pool of 4, then at most 4 descriptors stay open and every text reads back', async () => {
    const handles = new LogHandles(4);
    const inbox = inboxAt(tempDir(), handles);
    const ids: Array<[string, string, string]> = [];
    for (let round = 0; round < 2; round++) {
      for (let a = 0; a < 30; a++) {
        const e = await inbox.add(`ag${a}`, `text ${round}/${a} ✓`, 'pending');
        ids.push([`ag${a}`, e.id, `text ${round}/${a} ✓`]);
        expect(handles.size).toBeLessThanOrEqual(4);
      }
    }
    for (const [agent, id, text] of ids) expect(inbox.get(agent, id)?.text).toBe(text);
    expect(handles.size).toBeLessThanOrEqual(4);
  });

  it('the default bound is an eighth of the descriptor limit, between 8 and 64', () => {
    expect([defaultLogHandles(96), defaultLogHandles(256), defaultLogHandles(1024), defaultLogHandles(20), defaultLogHandles(null)]).toEqual([12, 32, 64, 8, 64]);
  });
});

describe('texts on disk', () => {
  it('when events are acked and cleared, then the remaining texts read back from their new places, also after a restart', async () => {
    const dir = tempDir();
    const inbox = inboxAt(dir);
    const texts = ['one', 'two\nlines', 'three "quoted"', 'four 😀', 'five'];
    const ev: EventRecord[] = [];
    for (const t of texts) ev.push(await inbox.add('leo', t, 'pending'));
    await inbox.ack('leo', [ev[0].id, ev[2].id, ev[4].id]);
    expect(await inbox.clear('leo', (e) => e.id === ev[2].id)).toBe(1);
    const want = [[ev[0].id, 'one', 'acked'], [ev[1].id, 'two\nlines', 'pending'], [ev[3].id, 'four 😀', 'pending'], [ev[4].id, 'five', 'acked']];
    const seen = (i: FileInbox) => i.list('leo', { all: true, limit: 10 }).rows.reverse().map((e) => [e.id, e.text, e.status]);
    expect(seen(inbox)).toEqual(want);
    // The compaction wrote acked events as acked add lines.
    expect(addLines(inbox.logPath('leo')).map((l) => [l.event.text, l.event.status])).toEqual(want.map(([, t, s]) => [t, s]));
    await inbox.closeAll();
    const again = inboxAt(dir);
    await again.load('leo');
    expect(seen(again)).toEqual(want);
    await again.ack('leo', [ev[1].id]);
    await again.closeAll();
    const third = inboxAt(dir);
    expect(await third.load('leo')).toMatchObject({ events: 4, compacted: true });
    expect(third.get('leo', ev[1].id)).toMatchObject({ text: 'two\nlines', status: 'acked' });
  });

  it('the text cache is bounded in bytes and drops the least recently used', () => {
    const c = new TextCache(100);
    const t = (ch: string) => ch.repeat(10);
    for (const k of ['a', 'b', 'c', 'd', 'e']) c.set(k, t(k));
    expect(c.get('a')).toBe(t('a'));
    c.set('f', t('f'));
    expect(['a', 'b', 'c', 'f'].map((k) => c.get(k))).toEqual([t('a'), undefined, t('c'), t('f')]);
    c.set('big', 'w'.repeat(13));
    expect(c.get('big')).toBeUndefined();
  });
});

describe('registry writes: write, then apply', () => {
  it('when the registry file cannot be written, then put rejects and nothing changes in memory', async () => {
    const dir = tempDir();
    const store = await LowAgentStore.open(dir);
    const rec = (id: string) => ({ id, home: join(tempDir(), id), allowedPaths: [], createdAt: '2025-06-01T10:00:00.000Z' });
    await store.put(rec('kept'));
    renameSync(dir, `${dir}.moved`);
    writeFileSync(dir, 'a file where the folder was');
    await expect(store.put(rec('lost'))).rejects.toThrow();
    await expect(store.remove('kept')).rejects.toThrow();
    expect(store.list().map((a) => a.id)).toEqual(['kept']);
    rmSync(`${dir}.moved`, { recursive: true, force: true });
  });
});
