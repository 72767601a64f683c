import { expect } from '@jest/globals';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { detailOf, iso, machineOf, type InspectorMessage, type Snap } from '../../src/services/inspectionMessages.js';
import { maskValues, redactCommand, redactText, type ValueMasks } from '../../src/domain/redact.js';
import type { SessionEvent } from '../../src/domain/session.js';
import type { CommandEvent } from '../../src/domain/ticket.js';
import type { LoomSystem } from '../../src/actors/system.js';
import type { DaemonActor } from '../../src/actors/tree.js';
import { topicSystemId } from '../../src/machines/agent.js';
import { InspectorFeed } from '../../src/inspector/feed.js';

/**
 * The object form of the inspector's live messages, as the serialiser built them before it wrote
 * JSON text (commit adf2745): every message an object, JSON.stringify'd at frame time. Kept here,
 * unchanged, as the reference the text form must equal byte for byte (test/services/inspectionSerialiser.int.test.ts).
 */
export class ObjectSerialiser {
  private readonly last = new WeakMap<AnyActorRef, { value: unknown; children: Record<string, AnyActorRef>; progress?: string }>();
  private readonly shown = new WeakMap<CommandEvent['ticket'], { cmd: string; masksId: number }>();

  constructor(private readonly clock: { now(): number }, private readonly masksOf: (ev: CommandEvent) => ValueMasks | null = () => null) {}

  seed(refs: AnyActorRef[]): void {
    for (const ref of refs) {
      const snap = ref.getSnapshot() as Snap;
      const children = snap.children ?? {};
      this.last.set(ref, { value: snap.value, children });
      const unlisted = Object.values(children).filter((c) => !(c as { systemId?: string }).systemId);
      if (unlisted.length > 0) this.seed(unlisted);
    }
  }

  fromInspection(ev: InspectionEvent): InspectorMessage[] {
    if (ev.type !== '@xstate.snapshot') return [];
    const ref = ev.actorRef as AnyActorRef;
    const machine = machineOf(ref);
    const systemId = (ref as { systemId?: string }).systemId;
    if (!machine) return [];
    const snap = ev.snapshot as Snap;
    const prev = this.last.get(ref);
    const children = snap.children ?? {};
    let at: string | undefined;
    const stamp = () => (at ??= iso(this.clock.now()));
    const out: InspectorMessage[] = [];
    if (systemId && ev.event.type === 'xstate.init') out.push({ type: 'actor', actor: systemId, machine, event: 'created', at: stamp() });
    else if (systemId && prev && !sameValue(prev.value, snap.value)) {
      out.push({ type: 'transition', actor: systemId, machine, from: prev.value, to: snap.value, event: ev.event.type, at: stamp() });
    }
    const progress = systemId && machine === 'install' ? this.installMessage(systemId, snap, stamp()) : null;
    if (progress && progress.key !== prev?.progress) out.push(progress.msg);
    if (prev && prev.children !== children) {
      for (const [id, child] of Object.entries(prev.children)) {
        const childId = (child as { systemId?: string }).systemId;
        const childMachine = machineOf(child);
        if (!Object.hasOwn(children, id) && childId && childMachine) out.push({ type: 'actor', actor: childId, machine: childMachine, event: 'stopped', at: stamp() });
      }
    }
    this.last.set(ref, { value: snap.value, children, ...(progress ? { progress: progress.key } : {}) });
    return out;
  }

  private installMessage(actor: string, snap: Snap, at: string): { key: string; msg: InspectorMessage } {
    const d = detailOf('install', snap.context, 0) as { agent_id: string; install_id: string; name: string | null; source: string; files_done: number; files_total: number; bytes: number };
    const msg: InspectorMessage = { type: 'install', actor, ...d, state: snap.value, at };
    return { key: JSON.stringify([snap.value, d.name, d.files_done, d.files_total, d.bytes]), msg };
  }

  fromCommand(ev: CommandEvent): InspectorMessage {
    const t = ev.ticket;
    const masks = this.masksOf(ev);
    let kept = this.shown.get(t);
    if (kept === undefined || kept.masksId !== (masks?.id ?? 0)) {
      kept = { cmd: redactCommand(t.cmd, masks), masksId: masks?.id ?? 0 };
      this.shown.set(t, kept);
    }
    const cmd = kept.cmd;
    const phase = ev.type.slice('command.'.length) as 'queued' | 'started' | 'refused' | 'finished';
    const at = iso(ev.at);
    if (ev.type === 'command.refused') return { type: 'command', phase, agent_id: ev.agentId, topic: ev.topic, ticket: t.id, cmd, via: t.via, request_id: t.requestId === null ? null : redactText(t.requestId, masks), at, ok: false, code: ev.reason };
    if (ev.type === 'command.finished') {
      return { type: 'command', phase, agent_id: ev.agentId, topic: ev.topic, ticket: t.id, cmd, via: t.via, request_id: t.requestId === null ? null : redactText(t.requestId, masks), at, ok: ev.result.ok, code: ev.result.code, duration_ms: ev.at - (t.startedAt ?? ev.at) };
    }
    return { type: 'command', phase, agent_id: ev.agentId, topic: ev.topic, ticket: t.id, cmd, via: t.via, request_id: t.requestId === null ? null : redactText(t.requestId, masks), at };
  }
}

const sameValue = (a: unknown, b: unknown): boolean =>
  a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));

/** What {@link recordBothForms} recorded: the feed's frames as sent, and the object form's messages in order. */
export interface BothForms {
  frames: string[];
  objects: InspectorMessage[];
}

/**
 * Watch `system` with a real InspectorFeed (one fake open client) and, beside it, the object form
 * fed the same inspection and command events with the same clock and masks. The clock moves once
 * per inspection event (the reference's observer runs before the feed's snapshot tap, for the same
 * event), so both stamp the same times. `stop()` flushes the last frame and returns both.
 */
export function recordBothForms(system: LoomSystem): { stop(): BothForms } {
  let tick = 0;
  const clock = {
    now: () => 1.7e12 + tick * 7,
    setTimeout: (fn: () => void, ms: number): unknown => setTimeout(fn, ms),
    clearTimeout: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>),
  };
  const objects: InspectorMessage[] = [];
  const reference = new ObjectSerialiser(clock, (ev) => system.inspection.masksFor(ev.agentId, topicSystemId(ev.agentId, ev.topic)));
  const root = (system as unknown as { tree: { root: DaemonActor } }).tree.root;
  reference.seed(Object.values(root.system.getAll() as Record<string, AnyActorRef>));
  const offRaw = system.inspection.observe((ev) => {
    tick++;
    objects.push(...reference.fromInspection(ev));
  });
  const offCommands = system.inspection.observeCommands((ev) => objects.push(reference.fromCommand(ev)));
  const offSessions = system.inspection.observeSessions((ev) => {
    const m = sessionObject(ev, system.inspection.masksFor(ev.agentId, topicSystemId(ev.agentId, ev.topic)), (id) => system.inspection.state().agents.flatMap((a) => a.topics.map((t) => [`topic:${a.agent_id}/${t.topic}`, t.doc?.uri ?? null] as const)).find(([k]) => k === id)?.[1] ?? null);
    if (m) objects.push(m);
  });
  const frames: string[] = [];
  const client = { readyState: 1, bufferedAmount: 0, send: (s: string) => frames.push(s), close: () => {}, terminate: () => {} };
  const feed = new InspectorFeed(system, clock, 1 << 30);
  feed.attach(client);
  return {
    stop() {
      feed.closeAll();
      offRaw();
      offCommands();
      offSessions();
      // The first frame is the snapshot (§13.2), not a live message.
      return { frames: frames.slice(1), objects };
    },
  };
}

/** Every frame equals JSON.stringify of the object form's messages it holds, in order; returns the kinds seen. */
export function expectSameBytes({ frames, objects }: BothForms): Set<string> {
  let next = 0;
  for (const frame of frames) {
    const count = (JSON.parse(frame) as unknown[]).length;
    expect(frame).toBe(JSON.stringify(objects.slice(next, next + count)));
    next += count;
  }
  expect(next).toBe(objects.length);
  return new Set(objects.map(kindOf));
}

/** `actor:created`, `transition:`, `command:refused:BUSY`, … */
function kindOf(m: InspectorMessage): string {
  if (m.type === 'actor') return `actor:${m.event}`;
  if (m.type === 'command') return m.phase === 'refused' ? `command:refused:${String(m.code)}` : `command:${m.phase}`;
  return `${m.type}:`;
}

/**
 * The object form of a `session` message (behaviour.md §13.7): the kept changes with their names
 * or address, never a value; null for the changes the history does not show.
 */
function sessionObject(ev: SessionEvent, masks: ValueMasks | null, uriOf: (topicId: string) => string | null): InspectorMessage | null {
  const actor = topicSystemId(ev.agentId, ev.topic);
  const at = iso(ev.at);
  const mask = (s: string | null) => (s !== null && masks ? maskValues(s, masks) : s);
  switch (ev.type) {
    case 'session.opened': return { type: 'session', actor, event: ev.type, uri: mask(ev.doc.uri), title: mask(ev.doc.title), at };
    case 'session.navigated': return { type: 'session', actor, event: ev.type, uri: mask(uriOf(actor)), block: ev.block, at };
    case 'session.closed': return { type: 'session', actor, event: ev.type, at };
    case 'session.set': return { type: 'session', actor, event: ev.type, scope: ev.scope, names: ev.values.map(([n]) => n), at };
    case 'session.cleared': return { type: 'session', actor, event: ev.type, scope: ev.scope, names: [...ev.names], at };
    default: return null;
  }
}
