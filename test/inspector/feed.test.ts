import { describe, expect, it } from '@jest/globals';
import type { Inspection, InspectorMessage, LiveMessage } from '../../src/services/inspection.js';
import type { Ticket } from '../../src/domain/ticket.js';
import type { InspectionSnapshot } from '../../src/services/inspectionSnapshot.js';
import { COALESCE_ABOVE_PER_S, COALESCED_FRAME_MS, FRAME_MS, InspectorFeed, type FeedClient } from '../../src/inspector/feed.js';
import { wantsCoalesced } from '../../src/inspector/socket.js';

/** A client stand-in: records what it was sent and how it was closed; its buffer is set by the test. */
class FakeClient implements FeedClient {
  readyState = 1;
  bufferedAmount = 0;
  sent: string[] = [];
  closed: [number, string] | null = null;
  send(data: string) { this.sent.push(data); }
  close(code: number, reason: string) { this.closed = [code, reason]; this.readyState = 2; }
  terminated = false;
  terminate() { this.terminated = true; this.readyState = 3; }
}

/** An inspection stand-in that counts subscriptions and lets the test emit messages. */
function fakeSource() {
  const state = { subscribed: 0, unsubscribed: 0, written: 0, emit: (_m: InspectorMessage, _live?: LiveMessage) => {} };
  const inspection = {
    // The feed hands over each message as a LiveMessage; `json` writes it (counted: a coalesced feed writes only what it keeps).
    liveFeed(send: (m: LiveMessage) => void) {
      state.subscribed++;
      state.emit = (m, live) => send(live ?? { kind: 'other', json: JSON.stringify(m) });
      return {
        unsubscribe: () => { state.unsubscribed++; state.emit = () => {}; },
        json: (m: LiveMessage) => { state.written++; return m.json ?? JSON.stringify({ type: 'command', ticket: m.kind === 'command' ? m.ticketId : '' }); },
      };
    },
  } as unknown as Inspection;
  const snapshot: InspectionSnapshot = { at: '2026-01-01T00:00:00.000Z', version: '0.1.0', uptime_ms: 5, agents: [] };
  return { state, source: { inspection, inspectState: () => snapshot } };
}

const msg = (n: number): InspectorMessage => ({ type: 'actor', actor: `agent:a${n}`, machine: 'agent', event: 'created', at: 'x' });
/**
 * A clock whose timers run only when the test says so: `tick()` runs every pending timer at once;
 * `advance(ms)` moves the time and runs the timers that are due by then.
 */
function manualClock() {
  const timers = new Map<number, { fn: () => void; ms: number; due: number }>();
  let next = 1;
  const clockState = {
    /** The clock's time: tests move it by hand. */
    t: 0,
    timers,
    now: () => clockState.t,
    setTimeout: (fn: () => void, ms: number) => { timers.set(next, { fn, ms, due: clockState.t + ms }); return next++; },
    clearTimeout: (h: unknown) => { timers.delete(h as number); },
    tick() { for (const [id, t] of [...timers]) { timers.delete(id); t.fn(); } },
    advance(ms: number) {
      clockState.t += ms;
      for (const [id, t] of [...timers]) if (t.due <= clockState.t) { timers.delete(id); t.fn(); }
    },
  };
  return clockState;
}
const clock = manualClock();

describe('inspector feed (behaviour.md §13, "costs nothing while nobody watches")', () => {
  it('when nobody is attached, the tree is not observed; the first client subscribes, the last one leaving unsubscribes', () => {
    const { state, source } = fakeSource();
    const feed = new InspectorFeed(source, clock, 1024);
    expect(state.subscribed).toBe(0);
    const a = new FakeClient();
    const b = new FakeClient();
    feed.attach(a);
    feed.attach(b);
    expect(state.subscribed).toBe(1);
    feed.detach(a);
    expect(state.unsubscribed).toBe(0);
    feed.detach(b);
    expect(state.unsubscribed).toBe(1);
    feed.attach(new FakeClient());
    expect(state.subscribed).toBe(2);
  });

  it('each client gets the snapshot first, then the live messages in frames (arrays, in order), each frame serialised once for all', () => {
    const { state, source } = fakeSource();
    const c = manualClock();
    const feed = new InspectorFeed(source, c as never, 1024);
    const a = new FakeClient();
    const b = new FakeClient();
    feed.attach(a);
    state.emit(msg(1));
    state.emit(msg(2));
    // Gathered, not sent: the frame goes out once FRAME_MS have passed, not before.
    c.advance(FRAME_MS - 1);
    expect(a.sent).toHaveLength(1);
    c.advance(1);
    expect(a.sent.map((x) => JSON.parse(x))).toEqual([
      { type: 'snapshot', at: '2026-01-01T00:00:00.000Z', version: '0.1.0', uptime_ms: 5, agents: [] },
      [msg(1), msg(2)],
    ]);
    state.emit(msg(3));
    // A client attaching mid-frame: the frame goes to the others first (its snapshot already holds it).
    feed.attach(b);
    expect(a.sent.map((x) => JSON.parse(x))[2]).toEqual([msg(3)]);
    expect(b.sent).toHaveLength(1);
    state.emit(msg(4));
    c.tick();
    expect(JSON.parse(b.sent[1])).toEqual([msg(4)]);
    expect(b.sent[1]).toBe(a.sent[3]);
    // Nothing gathered: no empty frame.
    c.tick();
    expect(a.sent).toHaveLength(4);
  });

  it('when the last client leaves, the gathered frame and its timer are dropped', () => {
    const { state, source } = fakeSource();
    const c = manualClock();
    const feed = new InspectorFeed(source, c as never, 1024);
    const a = new FakeClient();
    feed.attach(a);
    state.emit(msg(1));
    feed.detach(a);
    expect(c.timers.size).toBe(0);
    const b = new FakeClient();
    feed.attach(b);
    c.tick();
    expect(b.sent.map((x) => JSON.parse(x).type)).toEqual(['snapshot']);
  });

  it('when a client\'s send buffer passes the limit, then it is closed with 1013 and gets nothing more; the others go on', () => {
    const { state, source } = fakeSource();
    const feed = new InspectorFeed(source, clock, 1000);
    const slow = new FakeClient();
    const fast = new FakeClient();
    feed.attach(slow);
    feed.attach(fast);
    slow.bufferedAmount = 1000;
    state.emit(msg(1));
    clock.tick();
    expect(slow.closed).toBeNull();
    slow.bufferedAmount = 1001;
    state.emit(msg(2));
    clock.tick();
    // 1013 (try again later) is what behaviour.md §13.1 gives a slow page.
    expect(slow.closed).toEqual([1013, 'inspector client too slow']);
    state.emit(msg(3));
    clock.tick();
    expect(slow.sent).toHaveLength(2);
    expect(fast.sent).toHaveLength(4);
    expect(feed.size).toBe(1);
  });

  it('on shutdown every client is told 1001, the observation ends, and a client that never answers is destroyed', async () => {
    const { state, source } = fakeSource();
    const feed = new InspectorFeed(source, clock, 1000);
    const a = new FakeClient();
    feed.attach(a);
    state.emit(msg(1));
    feed.closeAll();
    // The gathered frame goes out before the close.
    expect(JSON.parse(a.sent[1])).toEqual([msg(1)]);
    expect(a.closed).toEqual([1001, 'loom shutting down']);
    expect(state.unsubscribed).toBe(1);
    expect(feed.size).toBe(0);
    expect(a.terminated).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(a.terminated).toBe(true);
  });

  describe('a client that asked for the coalesced feed (?coalesce=1)', () => {
    /** A command that starts and finishes on topic `topic`, as the serialiser hands it over. */
    const ran = (state: { emit: (m: InspectorMessage, live?: LiveMessage) => void }, topic: string, n: number) => {
      for (const phase of ['started', 'finished'] as const) {
        // Facts not yet written (json undefined): the stand-in's `json` writes {type, ticket}.
        const live: LiveMessage = { kind: 'command', type: `command.${phase}`, agentId: 'leo', topic, ticketId: `t${n}`, ticket: { id: `t${n}` } as Ticket, at: 0, masks: null, ok: undefined, code: undefined, durationMs: undefined, json: undefined };
        state.emit({ type: 'command', phase, agent_id: 'leo', topic, ticket: `t${n}`, cmd: '/help', via: 'exec', request_id: null, at: 'x' }, live);
      }
    };

    /** A feed with a plain client and a coalesced one attached, in that order. */
    const bothKinds = () => {
      const { state, source } = fakeSource();
      const c = manualClock();
      const feed = new InspectorFeed(source, c as never, 1 << 20);
      const plain = new FakeClient();
      const page = new FakeClient();
      feed.attach(plain);
      feed.attach(page, { coalesce: true });
      return { state, c, feed, plain, page };
    };

    it('gets the whole frame while quiet; under a flood, frames of a second led by what they left out, while a plain client still gets every message', () => {
      const { state, c, feed, plain, page } = bothKinds();
      expect(feed.size).toBe(2);
      ran(state, 'q', 1);
      // Two timers of FRAME_MS: the plain frame and the coalesced one.
      expect([...c.timers.values()].map((t) => t.ms)).toEqual([FRAME_MS, FRAME_MS]);
      c.tick();
      expect(JSON.parse(page.sent[1])).toEqual(JSON.parse(plain.sent[1]));
      // A flood: more than COALESCE_ABOVE_PER_S messages a second in the frame.
      const flood = Math.ceil((COALESCE_ABOVE_PER_S * FRAME_MS) / 1000 / 2) + 1;
      for (let i = 2; i < 2 + flood; i++) ran(state, 'q', i);
      c.tick();
      expect(JSON.parse(page.sent[2])).toHaveLength(flood * 2);
      // The next coalesced frame spans a second and keeps the last 20 commands.
      for (let i = 100; i < 130; i++) ran(state, 'q', i);
      expect([...c.timers.values()].map((t) => t.ms).sort((a, b) => a - b)).toEqual([FRAME_MS, COALESCED_FRAME_MS]);
      c.tick();
      const frame = JSON.parse(page.sent[3]) as Array<Record<string, unknown>>;
      expect(frame[0]).toEqual({ type: 'coalesced', commands: 10, messages: 20, at: '1970-01-01T00:00:00.000Z' });
      expect(frame.slice(1).map((m) => m.ticket)).toEqual(Array.from({ length: 40 }, (_, i) => `t${110 + Math.floor(i / 2)}`));
      expect(JSON.parse(plain.sent[3])).toHaveLength(60);
      // Quiet again: back to FRAME_MS.
      ran(state, 'q', 200);
      expect([...c.timers.values()].map((t) => t.ms)).toEqual([FRAME_MS, FRAME_MS]);
    });

    it('after a flood and a quiet spell, the first new message goes out within FRAME_MS, not a second later', () => {
      const { state, c, page } = bothKinds();
      // A flood frame: the next coalesced frame would span a second.
      for (let i = 0; i < 40; i++) ran(state, 'q', i);
      c.tick();
      expect(JSON.parse(page.sent[1])[0]).toMatchObject({ type: 'coalesced' });
      // Two seconds of nothing, then one command: its frame is a short one again.
      c.t += 2000;
      ran(state, 'q', 100);
      expect([...c.timers.values()].map((t) => t.ms)).toEqual([FRAME_MS, FRAME_MS]);
      // Still a flood within the second after a flood frame: the long frame stays.
      for (let i = 0; i < 40; i++) ran(state, 'q', 200 + i);
      c.tick();
      c.t += 500;
      ran(state, 'q', 300);
      expect([...c.timers.values()].map((t) => t.ms).sort((x, y) => x - y)).toEqual([FRAME_MS, COALESCED_FRAME_MS]);
    });

    it('writes only the commands it keeps: a flood costs the daemon the JSON of the last 20, not of all', () => {
      const { state, source } = fakeSource();
      const c = manualClock();
      const feed = new InspectorFeed(source, c as never, 1 << 20);
      const page = new FakeClient();
      feed.attach(page, { coalesce: true });
      // 40 commands in one frame: the last 20 are written, and the next frame spans a second.
      for (let i = 0; i < 40; i++) ran(state, 'q', i);
      c.tick();
      expect(state.written).toBe(40);
      expect([...c.timers.values()]).toEqual([]);
      for (let i = 100; i < 200; i++) ran(state, 'q', i);
      expect([...c.timers.values()].map((t) => t.ms)).toEqual([COALESCED_FRAME_MS]);
      c.tick();
      expect(state.written).toBe(40 + 40);
      expect(JSON.parse(page.sent[2])[0]).toMatchObject({ type: 'coalesced', commands: 80, messages: 160 });
    });

    it('when the last coalesced client leaves, its frame and timer go; the plain client goes on', () => {
      const { state, c, feed, plain, page } = bothKinds();
      ran(state, 'q', 1);
      feed.detach(page);
      expect([...c.timers.values()].map((t) => t.ms)).toEqual([FRAME_MS]);
      c.tick();
      expect(page.sent).toHaveLength(1);
      expect(JSON.parse(plain.sent[1])).toHaveLength(2);
      expect(state.unsubscribed).toBe(0);
      feed.detach(plain);
      expect(state.unsubscribed).toBe(1);
    });
  });

  it('the upgrade asks for the coalesced feed only with coalesce=1 (first value wins; any other query is a plain feed)', () => {
    const yes = ['/inspect/ws?coalesce=1', '/inspect/ws?x=2&coalesce=1', '/inspect/ws?coalesce=1&coalesce=0'];
    const no = [undefined, '/inspect/ws', '/inspect/ws?', '/inspect/ws?coalesce=0', '/inspect/ws?coalesce=true', '/inspect/ws?coalesce=__proto__',
      '/inspect/ws?__proto__=1', '/inspect/ws?constructor=1', '/inspect/ws?%ff=%ff', `/inspect/ws?${'a'.repeat(10000)}=1`, '/inspect/ws?coalesce'];
    for (const url of yes) expect([url, wantsCoalesced(url)]).toEqual([url, true]);
    for (const url of no) expect([url, wantsCoalesced(url)]).toEqual([url, false]);
  });
});
