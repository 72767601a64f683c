import { describe, expect, it } from '@jest/globals';
import { RecentCommands } from '../../src/services/recentCommands.js';
import { compileMasks, envMask, sessionMask } from '../../src/domain/redact.js';
import type { CommandEvent, Ticket } from '../../src/domain/ticket.js';

const ticket = (n: number, cmd = `/info ${n}`): Ticket => ({ id: `t${n}`, cmd, requestId: null, via: 'exec', queuedAt: 1000 * n, startedAt: 1000 * n + 5 });
const finished = (t: Ticket, ok = true): CommandEvent => ({
  type: 'command.finished', agentId: 'a', topic: 'main', ticket: t, at: (t.startedAt as number) + 7,
  result: { ok, code: ok ? null : 'NOT_FOUND', body: 'output-hidden', meta: null, topic: 'main', topicType: 'tab' },
  output: {} as never,
});

describe('recent commands per topic (behaviour.md §13.2)', () => {
  it('keeps the last 20 finished or refused commands, oldest first, with their times, code and redacted first line', () => {
    const r = new RecentCommands();
    for (let n = 1; n <= 25; n++) r.record('topic:a/main', finished(ticket(n), n % 2 === 0));
    r.record('topic:a/main', { type: 'command.started', agentId: 'a', topic: 'main', ticket: ticket(26), at: 1 });
    const refusedTicket = { ...ticket(27, '/set $K = "secret-value"\nbody-hidden'), startedAt: null };
    r.record('topic:a/main', { type: 'command.refused', agentId: 'a', topic: 'main', ticket: refusedTicket, at: 27000 + 120000, reason: 'QUEUE_TIMEOUT', limits: { max: 5, waitMs: 120000 } });
    const list = r.of('topic:a/main');
    expect(list).toHaveLength(20);
    expect(list.map((e) => e.ticket)).toEqual([...Array.from({ length: 19 }, (_, i) => `t${i + 7}`), 't27']);
    expect(list[0]).toEqual({ ticket: 't7', cmd: '/info 7', request_id: null, via: 'exec', ok: false, code: 'NOT_FOUND', queued_ms: 5, duration_ms: 7, at: new Date(7012).toISOString() });
    expect(list[19]).toEqual({ ticket: 't27', cmd: '/set $K = "se…"', request_id: null, via: 'exec', ok: false, code: 'QUEUE_TIMEOUT', queued_ms: 120000, duration_ms: 0, at: new Date(147000).toISOString(), wait_limit_ms: 120000 });
    expect(JSON.stringify(list)).not.toMatch(/hidden|secret-value/);
    expect(r.of('topic:a/other')).toEqual([]);
    r.forget('topic:a/main');
    expect(r.of('topic:a/main')).toEqual([]);
  });
});

describe('recent commands keep env-store and session values out (behaviour.md §13.4)', () => {
  it('masks the values known when a command ends, and those set later when the list is read; an /unset brings none back', () => {
    const r = new RecentCommands();
    const token = compileMasks([['s3cret-value-123', envMask('TOKEN')], ['sess-value-77', sessionMask('v')]]);
    r.record('topic:a/main', finished(ticket(1, '/exec echo s3cret-value-123 sess-value-77\nbody')), () => token);
    // Set after the command ran: masked when read.
    r.record('topic:a/main', finished(ticket(2, '/exec echo later-value-42')), () => token);
    const later = compileMasks([['later-value-42', envMask('LATER')]]);
    expect(r.of('topic:a/main', later).map((e) => e.cmd)).toEqual(['/exec echo ${env:TOKEN} {v}', '/exec echo ${env:LATER}']);
    // TOKEN and {v} unset since: still masked (the kept line never held them).
    expect(r.of('topic:a/main', null).map((e) => e.cmd)).toEqual(['/exec echo ${env:TOKEN} {v}', '/exec echo later-value-42']);
    expect(JSON.stringify(r.of('topic:a/main', later))).not.toMatch(/s3cret|sess-value|later-value|body/);
  });
});
