import { afterEach, describe, expect, it } from '@jest/globals';
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { EVENT_ID_RE } from '../../src/domain/events.js';
import { systemClock } from '../../src/domain/ports.js';
import { FileInbox } from '../../src/stores/inbox.js';
import { tempDir } from '../helpers/temp.js';

const opened: FileInbox[] = [];
function inboxAt(dir = tempDir()): { inbox: FileInbox; dir: string } {
  const inbox = new FileInbox(dir, systemClock);
  opened.push(inbox);
  return { inbox, dir };
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((i) => i.closeAll()));
});

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('inbox log (behaviour.md §9.8)', () => {
  it('when an event is added, then the log holds one add line with the event and ackedAt null', async () => {
    const { inbox } = inboxAt();
    const e = await inbox.add('leo', 'hello', 'pending');
    expect(e.id).toMatch(EVENT_ID_RE);
    expect(Object.keys(e).sort()).toEqual(['agentId', 'id', 'receivedAt', 'source', 'status', 'text']);
    expect(e).toMatchObject({ agentId: 'leo', source: 'local-webhook', text: 'hello', status: 'pending' });
    expect(lines(inbox.logPath('leo'))).toEqual([{ op: 'add', event: { ...e, ackedAt: null } }]);
    expect(statSync(inbox.logPath('leo')).mode & 0o777).toBe(0o600);
  });

  it('when many events are added concurrently, then each is one line, ids are strictly increasing and order is kept', async () => {
    const { inbox } = inboxAt();
    const made = await Promise.all(Array.from({ length: 200 }, (_, i) => inbox.add('leo', `t${i}`, 'pending')));
    const ids = made.map((e) => e.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(200);
    const log = lines(inbox.logPath('leo'));
    expect(log.map((l) => (l.event as { id: string }).id)).toEqual(ids);
    expect(inbox.list('leo', { all: false, limit: 1000 }).rows.map((e) => e.id)).toEqual([...ids].reverse());
  });

  it('when an event is appended to a large log, then the file only grows by that line (no rewrite)', async () => {
    const { inbox } = inboxAt();
    for (let i = 0; i < 50; i++) await inbox.add('leo', `t${i}`, 'pending');
    const before = statSync(inbox.logPath('leo'));
    const e = await inbox.add('leo', 'one more', 'pending');
    const after = statSync(inbox.logPath('leo'));
    expect(after.ino).toBe(before.ino);
    expect(after.size - before.size).toBe(Buffer.byteLength(JSON.stringify({ op: 'add', event: { ...e, ackedAt: null } }) + '\n'));
  });

  it('when the inbox is reopened, then acks survive and the log is compacted to live events', async () => {
    const { inbox, dir } = inboxAt();
    const a = await inbox.add('leo', 'a', 'pending');
    const b = await inbox.add('leo', 'b', 'pending');
    await inbox.ack('leo', [a.id]);
    expect(lines(inbox.logPath('leo')).map((l) => l.op)).toEqual(['add', 'add', 'ack']);
    await inbox.closeAll();
    const { inbox: again } = inboxAt(dir);
    const report = await again.load('leo');
    expect(report).toEqual({ events: 2, skipped: 0, compacted: true });
    expect(again.get('leo', a.id)?.status).toBe('acked');
    expect(again.get('leo', b.id)?.status).toBe('pending');
    const log = lines(again.logPath('leo'));
    expect(log.map((l) => l.op)).toEqual(['add', 'add']);
    expect((log[0].event as { status: string; ackedAt: string }).status).toBe('acked');
    expect(typeof (log[0].event as { ackedAt: string }).ackedAt).toBe('string');
  });

  it('when the last line is torn after a crash, then it is skipped and the next append starts on a clean line', async () => {
    const { inbox, dir } = inboxAt();
    const a = await inbox.add('leo', 'kept', 'pending');
    await inbox.closeAll();
    appendFileSync(inbox.logPath('leo'), '{"op":"add","event":{"id":"evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2","te');
    const { inbox: again } = inboxAt(dir);
    expect(await again.load('leo')).toEqual({ events: 1, skipped: 1, compacted: true, quarantine: `${again.logPath('leo')}.quarantine` });
    expect(readFileSync(`${again.logPath('leo')}.quarantine`, 'utf8')).toBe('{"op":"add","event":{"id":"evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2","te\n');
    const b = await again.add('leo', 'after', 'pending');
    expect(lines(again.logPath('leo')).map((l) => (l.event as { text: string }).text)).toEqual(['kept', 'after']);
    expect(again.list('leo', { all: true, limit: 10 }).rows.map((e) => e.id)).toEqual([b.id, a.id]);
  });

  it('when a line in the middle is damaged, then only that line leaves the log (kept in the quarantine file) and loading never fails', async () => {
    const { dir } = inboxAt();
    const path = `${dir}/agents/leo/state/events.jsonl`;
    mkdirSync(dirname(path), { recursive: true });
    const ev = (id: string, text: string) => JSON.stringify({ op: 'add', event: { id, agentId: 'leo', receivedAt: '2025-06-01T10:00:00.000Z', source: 'local-webhook', text, status: 'pending', ackedAt: null } });
    writeFileSync(path, [ev('evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2', 'one'), 'garbage{', '{"op":"add","event":{"id":"not-an-id"}}', ev('evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B3', 'two'), ''].join('\n'));
    const { inbox } = inboxAt(dir);
    expect(await inbox.load('leo')).toEqual({ events: 2, skipped: 2, compacted: true, quarantine: `${path}.quarantine` });
    expect(readFileSync(`${path}.quarantine`, 'utf8')).toBe('garbage{\n{"op":"add","event":{"id":"not-an-id"}}\n');
    expect(inbox.list('leo', { all: true, limit: 10 }).rows.map((e) => e.text)).toEqual(['two', 'one']);
  });

  it('when del lines are in the log, then those events are gone after loading', async () => {
    const { inbox, dir } = inboxAt();
    const a = await inbox.add('leo', 'a', 'pending');
    const b = await inbox.add('leo', 'b', 'pending');
    await inbox.closeAll();
    appendFileSync(inbox.logPath('leo'), JSON.stringify({ op: 'del', ids: [a.id] }) + '\n');
    const { inbox: again } = inboxAt(dir);
    await again.load('leo');
    expect(again.get('leo', a.id)).toBeUndefined();
    expect(again.get('leo', b.id)?.text).toBe('b');
  });

  it('when /events.clear runs, then acked events are removed by a compaction and pending ones stay', async () => {
    const { inbox } = inboxAt();
    const a = await inbox.add('leo', 'a', 'pending');
    const b = await inbox.add('leo', 'b', 'pending');
    await inbox.ack('leo', [a.id]);
    expect(await inbox.clear('leo', (e) => e.status === 'acked')).toBe(1);
    expect(lines(inbox.logPath('leo')).map((l) => (l.event as { id: string }).id)).toEqual([b.id]);
    expect(await inbox.clear('leo', (e) => e.status === 'acked')).toBe(0);
    expect(await inbox.clear('leo', () => true)).toBe(1);
    expect(readFileSync(inbox.logPath('leo'), 'utf8')).toBe('');
    const c = await inbox.add('leo', 'c', 'pending');
    expect(inbox.list('leo', { all: true, limit: 10 }).rows.map((e) => e.id)).toEqual([c.id]);
  });

  it('when appends race with a clear, then no durable event is lost', async () => {
    const { inbox, dir } = inboxAt();
    const first = await Promise.all(Array.from({ length: 20 }, (_, i) => inbox.add('leo', `a${i}`, 'pending')));
    await inbox.ack('leo', first.map((e) => e.id));
    const [more, cleared] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, (_, i) => inbox.add('leo', `b${i}`, 'pending'))),
      inbox.clear('leo', (e) => e.status === 'acked'),
      Promise.all(Array.from({ length: 20 }, (_, i) => inbox.add('leo', `c${i}`, 'pending'))),
    ]);
    expect(cleared).toBe(20);
    await inbox.closeAll();
    const { inbox: again } = inboxAt(dir);
    await again.load('leo');
    expect(again.list('leo', { all: true, limit: 100 }).matched).toBe(40);
    for (const e of more) expect(again.get('leo', e.id)?.text).toBe(e.text);
  });

  it('when an agent inbox is dropped, then its log is closed and a later touch starts from the disk', async () => {
    const { inbox } = inboxAt();
    await inbox.add('leo', 'a', 'pending');
    await inbox.drop('leo');
    expect(existsSync(inbox.logPath('leo'))).toBe(true);
    expect(inbox.list('leo', { all: true, limit: 10 }).matched).toBe(1);
  });

  it('when a log holds ids out of order (a clock set back between runs) and odd fields, then every event is found, acked and cleared, and kept as written', async () => {
    const { inbox, dir } = inboxAt();
    const path = inbox.logPath('leo');
    mkdirSync(dirname(path), { recursive: true });
    const ev = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ op: 'add', event: {
      id, agentId: 'leo', receivedAt: '2026-01-02T03:04:05.678Z', source: 'local-webhook', text: `text of ${id}`, status: 'pending', ackedAt: null, ...extra,
    } });
    const ids = ['evt_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'evt_01JAAAAAAAAAAAAAAAAAAAAAAA', 'evt_01JMMMMMMMMMMMMMMMMMMMMMMM'];
    writeFileSync(path, [
      ev(ids[0]),
      ev(ids[1], { receivedAt: '2026-01-02 03:04:05', source: 'mail' }),
      ev(ids[2], { agentId: 'other' }),
    ].join('\n') + '\n');
    expect(await inbox.load('leo')).toEqual({ events: 3, skipped: 0, compacted: false });
    expect(inbox.get('leo', ids[1])).toEqual({ id: ids[1], agentId: 'leo', receivedAt: '2026-01-02 03:04:05', source: 'mail', text: `text of ${ids[1]}`, status: 'pending' });
    expect(inbox.get('leo', ids[2])?.agentId).toBe('other');
    expect(inbox.list('leo', { all: true, limit: 10 }).rows.map((e) => e.id)).toEqual([...ids].reverse());
    await inbox.ack('leo', [ids[1]]);
    expect(await inbox.clear('leo', (e) => e.status === 'acked')).toBe(1);
    expect(inbox.get('leo', ids[1])).toBeUndefined();
    expect(inbox.get('leo', ids[0])?.text).toBe(`text of ${ids[0]}`);
    expect(inbox.get('leo', ids[2])?.text).toBe(`text of ${ids[2]}`);
    // A new event after them is found too, and the file keeps what it was given.
    const added = await inbox.add('leo', 'new', 'pending');
    expect(inbox.get('leo', added.id)?.text).toBe('new');
    await inbox.closeAll();
    const { inbox: again } = inboxAt(dir);
    await again.load('leo');
    expect(again.list('leo', { all: true, limit: 10 }).rows.map((e) => e.id)).toEqual([added.id, ids[2], ids[0]]);
    expect(again.get('leo', ids[2])?.agentId).toBe('other');
  });

  it('when ids are malformed, then get finds nothing (behaviour.md §9.8: validated before lookup)', async () => {
    const { inbox } = inboxAt();
    await inbox.add('leo', 'a', 'pending');
    expect(inbox.get('leo', 'evt_x')).toBeUndefined();
    expect(inbox.get('leo', '__proto__')).toBeUndefined();
  });
});
