import { describe, expect, it } from '@jest/globals';
import type { Inspection, InspectorMessage } from '../../src/actors/inspection.js';
import type { InspectionSnapshot } from '../../src/actors/inspectionSnapshot.js';
import { InspectorFeed, SLOW_CLIENT_CODE, type FeedClient } from '../../src/inspector/feed.js';

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
  const state = { subscribed: 0, unsubscribed: 0, emit: (_m: InspectorMessage) => {} };
  const inspection = {
    feed(send: (m: InspectorMessage) => void) {
      state.subscribed++;
      state.emit = send;
      return () => { state.unsubscribed++; state.emit = () => {}; };
    },
  } as unknown as Inspection;
  const snapshot: InspectionSnapshot = { at: '2026-01-01T00:00:00.000Z', version: '0.1.0', uptime_ms: 5, agents: [] };
  return { state, source: { inspection, inspectState: () => snapshot } };
}

const msg = (n: number): InspectorMessage => ({ type: 'actor', actor: `agent:a${n}`, machine: 'agent', event: 'created', at: 'x' });
const clock = { now: () => 0, setTimeout: () => 0, clearTimeout: () => undefined } as never;

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

  it('each client gets the snapshot first, then every live message, serialised once for all', () => {
    const { state, source } = fakeSource();
    const feed = new InspectorFeed(source, clock, 1024);
    const a = new FakeClient();
    const b = new FakeClient();
    feed.attach(a);
    state.emit(msg(1));
    feed.attach(b);
    state.emit(msg(2));
    expect(a.sent.map((s) => JSON.parse(s).type)).toEqual(['snapshot', 'actor', 'actor']);
    expect(b.sent.map((s) => JSON.parse(s).type)).toEqual(['snapshot', 'actor']);
    expect(JSON.parse(a.sent[0])).toEqual({ type: 'snapshot', at: '2026-01-01T00:00:00.000Z', version: '0.1.0', uptime_ms: 5, agents: [] });
    expect(b.sent[1]).toBe(a.sent[2]);
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
    expect(slow.closed).toBeNull();
    slow.bufferedAmount = 1001;
    state.emit(msg(2));
    expect(slow.closed).toEqual([SLOW_CLIENT_CODE, 'inspector client too slow']);
    expect(SLOW_CLIENT_CODE).toBe(1013);
    state.emit(msg(3));
    expect(slow.sent).toHaveLength(2);
    expect(fast.sent).toHaveLength(4);
    expect(feed.size).toBe(1);
  });

  it('on shutdown every client is told 1001, the observation ends, and a client that never answers is destroyed', async () => {
    const { state, source } = fakeSource();
    const feed = new InspectorFeed(source, clock, 1000);
    const a = new FakeClient();
    feed.attach(a);
    feed.closeAll();
    expect(a.closed).toEqual([1001, 'loom shutting down']);
    expect(state.unsubscribed).toBe(1);
    expect(feed.size).toBe(0);
    expect(a.terminated).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(a.terminated).toBe(true);
  });
});
