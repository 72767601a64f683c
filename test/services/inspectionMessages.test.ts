import { describe, expect, it } from '@jest/globals';
import { iso } from '../../src/services/inspectionMessages.js';
import { InspectionSerialiser } from '../../src/services/inspectionSerialiser.js';
import { compileMasks, envMask, sessionMask, type ValueMasks } from '../../src/domain/redact.js';
import type { CommandEvent } from '../../src/domain/ticket.js';

describe('inspection message times (behaviour.md §13.3 `at`)', () => {
  it('equal Date#toISOString for every millisecond, across second, day and year boundaries and in any order', () => {
    const edges = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1, 0, 0, 0, 0), -1, -999, -1000, 8.64e15 - 10];
    let seed = 42;
    const random = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed; };
    const values = [...edges, ...Array.from({ length: 5000 }, () => 1.7e12 + (random() % 1e8))];
    // Alternate two clocks as the serialiser does (event times, then the clock's reads).
    for (let i = 0; i < values.length; i++) {
      const ms = i % 2 === 0 ? values[i] : values[i - 1] + 3;
      expect(iso(ms)).toBe(new Date(ms).toISOString());
    }
  });
});

describe('command messages', () => {
  const ticket = { id: 't1', cmd: '/set $TOKEN = "s3cret-value"\nbody line', requestId: 'r1', via: 'exec' as const, queuedAt: 1000, startedAt: 1500 };
  const ev = (type: string, extra: Record<string, unknown> = {}) => ({ type, agentId: 'ann', topic: 'main', ticket, at: 2000, ...extra }) as unknown as CommandEvent;

  it('each phase carries the redacted first line (the value masked, the body never) and its own fields', () => {
    const s = new InspectionSerialiser({ now: () => 2000 });
    const at = new Date(2000).toISOString();
    const fields = { agent_id: 'ann', topic: 'main', ticket: 't1', cmd: '/set $TOKEN = "s3…"', via: 'exec', request_id: 'r1', at };
    // The JSON text, keys in this order (what the page receives).
    expect(s.fromCommand(ev('command.queued'))).toBe(JSON.stringify({ type: 'command', phase: 'queued', ...fields }));
    expect(s.fromCommand(ev('command.started'))).toBe(JSON.stringify({ type: 'command', phase: 'started', ...fields }));
    expect(s.fromCommand(ev('command.finished', { result: { ok: true, code: null } }))).toBe(JSON.stringify({ type: 'command', phase: 'finished', ...fields, ok: true, code: null, duration_ms: 500 }));
    expect(s.fromCommand(ev('command.refused', { reason: 'QUEUE_FULL' }))).toBe(JSON.stringify({ type: 'command', phase: 'refused', ...fields, ok: false, code: 'QUEUE_FULL' }));
    expect(s.fromCommand(ev('command.started'))).not.toMatch(/s3cret|body line/);
  });

  it('facts taken now are written later with the masks of when they were taken; a long command is written at once and its ticket let go', () => {
    let masks: ValueMasks | null = compileMasks([['s3cret-value', envMask('TOKEN')]]);
    const s = new InspectionSerialiser({ now: () => 2000 }, () => masks);
    const short = { ...ticket, cmd: '/exec echo s3cret-value' };
    const facts = s.commandFacts({ type: 'command.started', agentId: 'ann', topic: 'main', ticket: short, at: 2000 } as unknown as CommandEvent);
    expect(facts.json).toBeUndefined();
    expect(facts.ticket).toBe(short);
    masks = null;
    expect(JSON.parse(s.commandJson(facts)).cmd).toBe('/exec echo ${env:TOKEN}');
    const long = { ...ticket, id: 't9', cmd: `/write ~/big.txt\n${'x'.repeat(5000)}` };
    const big = s.commandFacts({ type: 'command.started', agentId: 'ann', topic: 'main', ticket: long, at: 2000 } as unknown as CommandEvent);
    expect(big.ticket).toBeNull();
    expect(big.ticketId).toBe('t9');
    expect(s.commandJson(big)).toBe(JSON.stringify({ type: 'command', phase: 'started', agent_id: 'ann', topic: 'main', ticket: 't9', cmd: '/write ~/big.txt', via: 'exec', request_id: 'r1', at: new Date(2000).toISOString() }));
  });
});

describe('command messages keep env-store and session values out (behaviour.md §13.4)', () => {
  const ticket = { id: 't2', cmd: '/exec echo s3cret-value-123 sess-value-77\nbody', requestId: null, via: 'mcp' as const, queuedAt: 1000, startedAt: 1500 };
  const ev = (type: string) => ({ type, agentId: 'ann', topic: 'main', ticket, at: 2000, result: { ok: true, code: null } }) as unknown as CommandEvent;

  it('masks the values of the command\'s agent and topic, and again when they change while it runs', () => {
    let masks: ValueMasks | null = compileMasks([['s3cret-value-123', envMask('TOKEN')]]);
    const asked: string[] = [];
    const s = new InspectionSerialiser({ now: () => 2000 }, (agentId, topic) => { asked.push(`${agentId}/${topic}`); return masks; });
    const cmdOf = (type: string) => (JSON.parse(s.fromCommand(ev(type))) as { cmd: string }).cmd;
    expect(cmdOf('command.queued')).toBe('/exec echo ${env:TOKEN} sess-value-77');
    expect(cmdOf('command.started')).toBe('/exec echo ${env:TOKEN} sess-value-77');
    expect(asked).toEqual(['ann/main', 'ann/main']);
    // {v} set while the command ran: the finished message masks it too.
    masks = compileMasks([['s3cret-value-123', envMask('TOKEN')], ['sess-value-77', sessionMask('v')]]);
    expect(cmdOf('command.finished')).toBe('/exec echo ${env:TOKEN} {v}');
  });
});
