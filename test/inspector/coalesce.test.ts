import { describe, expect, it } from '@jest/globals';
import type { InspectorMessage, LiveMessage } from '../../src/services/inspection.js';
import type { InspectionSnapshot } from '../../src/services/inspectionSnapshot.js';
import { RECENT_PER_TOPIC } from '../../src/services/recentCommands.js';
import type { Ticket } from '../../src/domain/ticket.js';
import { COALESCE_TRANSITIONS, Coalescer } from '../../src/inspector/coalesce.js';

/** The page's model (web/inspector/model.js), loaded as the browser loads it. */
interface PageModel {
  applySnapshot(s: unknown): void;
  apply(m: unknown): boolean;
  topics: Map<string, { rev: number; state: unknown; running: unknown; waiting: unknown[]; recent: unknown[] }>;
  transitions: Map<string, unknown[]>;
}
const modelPath = '../../web/inspector/model.js';
const { Model } = (await import(modelPath)) as { Model: new () => PageModel };

const AT = Date.parse('2026-01-01T00:00:00.000Z');
const isoAt = (ms: number) => new Date(AT + ms).toISOString();
const emptySnapshot: InspectionSnapshot = { at: isoAt(0), version: '0', uptime_ms: 0, agents: [] };

type Phase = 'queued' | 'started' | 'refused' | 'finished';
/** A command message as the feed gets it: its facts, here with its JSON already written. */
function command(agent: string, topic: string, ticket: string, phase: Phase, at: number): LiveMessage {
  const finished = phase === 'finished';
  const refused = phase === 'refused';
  const msg: InspectorMessage = {
    type: 'command', phase, agent_id: agent, topic, ticket, cmd: `/echo ${ticket}`, via: 'exec', request_id: null, at: isoAt(at),
    ...(finished ? { ok: true, code: null, duration_ms: 1 } : refused ? { ok: false, code: 'QUEUE_FULL' } : {}),
  };
  return {
    kind: 'command', type: `command.${phase}`, agentId: agent, topic, ticketId: ticket, ticket: { id: ticket } as Ticket, at: AT + at, masks: null,
    ok: finished ? true : refused ? false : undefined, code: finished ? null : refused ? 'QUEUE_FULL' : undefined, durationMs: finished ? 1 : undefined,
    json: JSON.stringify(msg),
  };
}
function transition(actor: string, from: string, to: string, at: number): LiveMessage {
  const msg: InspectorMessage = { type: 'transition', actor, machine: 'topicQueue', from, to, event: 'x', at: isoAt(at) };
  return { kind: 'transition', actor, json: JSON.stringify(msg) };
}
/** The JSON of a message made above. */
const jsonOf = (m: LiveMessage): string => m.json as string;

/**
 * A topic queue as the daemon runs it (one running, up to five waiting, refusals past that), making
 * the messages the inspector would send, in order.
 */
class FakeTopic {
  private issued = 0;
  private running: string | null = null;
  private readonly waiting: string[] = [];
  /** `transitionFirst`: the topic's transition message before its command message, or after (both orders are tried). */
  constructor(readonly agent: string, readonly topic: string, private readonly transitionFirst = true) {}
  private both(out: LiveMessage[], tr: LiveMessage, cmd: LiveMessage): void {
    if (this.transitionFirst) out.push(tr, cmd);
    else out.push(cmd, tr);
  }
  private get actor() { return `topic:${this.agent}/${this.topic}`; }
  arrive(at: number, out: LiveMessage[]): void {
    const t = `t${++this.issued}`;
    if (this.running === null) {
      this.running = t;
      this.both(out, transition(this.actor, 'idle', 'executing', at), command(this.agent, this.topic, t, 'started', at));
    } else if (this.waiting.length < 5) {
      this.waiting.push(t);
      out.push(command(this.agent, this.topic, t, 'queued', at));
    } else {
      out.push(command(this.agent, this.topic, t, 'refused', at));
    }
  }
  /** `n` commands that come and go one after the other, from time `at` on. */
  ran(n: number, at: number, out: LiveMessage[]): void {
    for (let i = 0; i < n; i++) {
      this.arrive(at + i, out);
      this.finish(at + i, out);
    }
  }
  finish(at: number, out: LiveMessage[]): void {
    if (this.running === null) return;
    const done = command(this.agent, this.topic, this.running, 'finished', at);
    const next = this.waiting.shift();
    if (next === undefined) {
      this.running = null;
      this.both(out, transition(this.actor, 'executing', 'idle', at), done);
    } else {
      out.push(done);
      this.running = next;
      out.push(command(this.agent, this.topic, next, 'started', at));
    }
  }
}

/** A small deterministic random source (the test must fail the same way every time). */
function random(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

const frameOf = (texts: string[]) => JSON.parse(`[${texts.join(',')}]`) as Array<{ type: string; messages?: number }>;
/** Map entries by key (the view sorts topics by name; the order the model met them in is not shown). */
const byKey = (x: unknown[], y: unknown[]) => (String(x[0]) < String(y[0]) ? -1 : String(x[0]) > String(y[0]) ? 1 : 0);
/** What the page shows of its model (`rev`, its count of changes for redrawing, differs by design). */
const picture = (m: PageModel) => ({
  topics: [...m.topics.entries()].map(([k, { rev: _rev, ...t }]) => [k, t]).sort(byKey),
  transitions: [...m.transitions.entries()].sort(byKey),
});

describe('the coalesced feed (behaviour.md §13.3 decision: /inspect/ws?coalesce=1)', () => {
  it('a quiet frame is passed whole', () => {
    const c = new Coalescer(emptySnapshot);
    const topic = new FakeTopic('leo', 'main');
    const out: LiveMessage[] = [];
    topic.ran(3, 0, out);
    for (const m of out) c.add(m);
    const frame = c.take(jsonOf);
    expect(frame).toEqual({ texts: out.map(jsonOf), droppedCommands: 0, droppedMessages: 0 });
    expect(c.size).toBe(0);
  });

  it(`under a flood it keeps each topic's last ${RECENT_PER_TOPIC} commands and each actor's last ${COALESCE_TRANSITIONS} transitions`, () => {
    const c = new Coalescer(emptySnapshot);
    const a = new FakeTopic('leo', 'a');
    const b = new FakeTopic('leo', 'b');
    const out: LiveMessage[] = [];
    a.ran(50, 0, out);
    b.ran(1, 100, out);
    for (const m of out) c.add(m);
    const frame = c.take(jsonOf);
    const kept = frameOf(frame.texts) as unknown as InspectorMessage[];
    const commandsOf = (topic: string) => kept.filter((m) => m.type === 'command' && m.topic === topic).map((m) => (m as { ticket: string }).ticket);
    expect(new Set(commandsOf('a'))).toEqual(new Set(Array.from({ length: 20 }, (_, i) => `t${31 + i}`)));
    expect(commandsOf('b')).toEqual(['t1', 't1']);
    expect(kept.filter((m) => m.type === 'transition' && m.actor === 'topic:leo/a')).toHaveLength(COALESCE_TRANSITIONS);
    // 30 commands of 2 messages left out, and 100 - 60 transitions.
    expect(frame.droppedCommands).toBe(30);
    expect(frame.droppedMessages).toBe(30 * 2 + 40);
    expect(frame.texts).toHaveLength(out.length - frame.droppedMessages);
    // Still in order: the kept texts are a subsequence of the whole frame.
    const order = frame.texts.map((t) => out.findIndex((m) => m.json === t));
    expect(order).toEqual([...order].sort((x, y) => x - y));
  });

  it('a command the client was told about in an earlier frame (or its snapshot) always keeps its messages', () => {
    const snapshot = {
      ...emptySnapshot,
      agents: [{ agent_id: 'leo', home: null, webhook: false, installs: [], topics: [{ topic: 'q', topic_type: 'tab', state: 'executing', running: { ticket: 't1' }, waiting: [{ ticket: 't2' }], doc: null, shell: null, recent: [] }] }],
    } as unknown as InspectionSnapshot;
    const c = new Coalescer(snapshot);
    const out: LiveMessage[] = [];
    // Frame 1: t3 queued behind them (announced by this frame).
    out.push(command('leo', 'q', 't3', 'queued', 1));
    for (const m of out.splice(0)) c.add(m);
    c.take(jsonOf);
    // Frame 2: all three end first, then 40 commands come and go.
    out.push(command('leo', 'q', 't1', 'finished', 2), command('leo', 'q', 't2', 'started', 2), command('leo', 'q', 't2', 'finished', 3));
    out.push(command('leo', 'q', 't3', 'started', 3), command('leo', 'q', 't3', 'finished', 4));
    for (let i = 4; i < 44; i++) out.push(command('leo', 'q', `t${i}`, 'started', 5 + i), command('leo', 'q', `t${i}`, 'finished', 5 + i));
    for (const m of out) c.add(m);
    const frame = c.take(jsonOf);
    const tickets = (frameOf(frame.texts) as unknown as Array<{ ticket: string }>).map((m) => m.ticket);
    expect(tickets.slice(0, 5)).toEqual(['t1', 't2', 't2', 't3', 't3']);
    expect(new Set(tickets.slice(5))).toEqual(new Set(Array.from({ length: 20 }, (_, i) => `t${24 + i}`)));
    expect(frame.droppedCommands).toBe(20);
  });

  it('the page builds the same picture from coalesced frames as from whole ones (random floods over five topics)', () => {
    for (const seed of [1, 7, 42]) {
      const rnd = random(seed);
      const topics = ['a', 'b', 'c', 'd', 'e'].map((t, i) => new FakeTopic(i < 3 ? 'leo' : 'ann', t, i % 2 === 0));
      const c = new Coalescer(emptySnapshot);
      const whole = new Model();
      const coalesced = new Model();
      whole.applySnapshot(emptySnapshot);
      coalesced.applySnapshot(emptySnapshot);
      let at = 0;
      let dropped = 0;
      for (let frame = 0; frame < 40; frame++) {
        const out: LiveMessage[] = [];
        // Quiet frames and floods, arrivals faster or slower than the topics answer.
        const events = rnd() < 0.3 ? Math.floor(rnd() * 5) : Math.floor(rnd() * 400);
        for (let i = 0; i < events; i++) {
          const t = topics[Math.floor(rnd() * topics.length)];
          if (rnd() < 0.55) t.arrive(at++, out);
          else t.finish(at++, out);
        }
        for (const m of out) whole.apply(JSON.parse(jsonOf(m)));
        for (const m of out) c.add(m);
        const f = c.take(jsonOf);
        dropped += f.droppedCommands;
        for (const m of frameOf(f.texts)) coalesced.apply(m);
        expect(picture(coalesced)).toEqual(picture(whole));
      }
      // The floods did leave commands out.
      expect(dropped).toBeGreaterThan(100);
    }
  });

  it('hostile names are plain keys: __proto__ and constructor topics and tickets', () => {
    const c = new Coalescer(emptySnapshot);
    const t = new FakeTopic('__proto__', 'constructor');
    const out: LiveMessage[] = [];
    t.ran(30, 0, out);
    out.push(command('constructor', '__proto__', '__proto__', 'refused', 99));
    for (const m of out) c.add(m);
    const frame = c.take(jsonOf);
    expect(frame.droppedCommands).toBe(10);
    expect(frameOf(frame.texts).at(-1)).toMatchObject({ ticket: '__proto__', phase: 'refused' });
    expect(({} as Record<string, unknown>).constructor).toBe(Object);
  });
});
