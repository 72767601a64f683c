import type { AnyActorRef, InspectionEvent } from 'xstate';
import { displayPath } from '../commands/format.js';
import { redactCommand, type ValueMasks } from '../domain/redact.js';
import type { SessionState } from '../domain/session.js';
import type { CommandEvent, Ticket } from '../domain/ticket.js';

/**
 * The one serialiser of the inspector (behaviour.md §13.3–13.4): everything that leaves the daemon
 * through inspection is built here, field by field, from what may be shown. A context is never
 * copied whole: it holds sessions (variables, documents), results and command bodies.
 */

/** A message of behaviour.md §13.3. */
export type InspectorMessage =
  | { type: 'actor'; actor: string; machine: string; event: 'created' | 'stopped'; at: string }
  | { type: 'transition'; actor: string; machine: string; from: unknown; to: unknown; event: string; at: string }
  | {
    type: 'command'; phase: 'queued' | 'started' | 'refused' | 'finished'; agent_id: string; topic: string; ticket: string;
    cmd: string; via: string; ok?: boolean; code?: string | null; duration_ms?: number; at: string;
  }
  | {
    type: 'install'; actor: string; agent_id: string; install_id: string; name: string | null; source: string;
    state: unknown; files_done: number; files_total: number; bytes: number; at: string;
  };

/** One live actor of the registry, redacted. */
export interface LiveActor {
  actor: string;
  machine: string;
  state: unknown;
  /** Machine-specific public fields (topics: queue; capabilities: token id; …). */
  detail: Record<string, unknown>;
}

/**
 * ISO time of an epoch ms (exported for its test). A watched daemon under load stamps thousands of
 * messages a second, and Date#toISOString was ~2 % of its CPU: the `YYYY-MM-DDTHH:MM:SS.` part is
 * kept per second and the milliseconds appended, so the command events' times and the clock's
 * reads (which alternate between different milliseconds) both hit it.
 */
let lastSecond = Number.NaN;
let secondPrefix = '';
export const iso = (ms: number): string => {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    // toISOString of the whole second: `….000Z` without its last 4 characters.
    secondPrefix = new Date(second * 1000).toISOString().slice(0, -4);
    lastSecond = second;
  }
  const milli = ms - second * 1000;
  return `${secondPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
};

/** Whether two state values are the same (strings for flat machines, objects for parallel ones). */
const sameValue = (a: unknown, b: unknown): boolean =>
  a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));

interface Snap {
  value?: unknown;
  status?: string;
  context?: unknown;
  children?: Record<string, AnyActorRef>;
}

/** The machine id of an actor, or null for actors that are not machines (invoked promises). */
function machineOf(ref: AnyActorRef): string | null {
  const logic = (ref as { logic?: { id?: unknown; config?: unknown } }).logic;
  return logic && typeof logic.id === 'string' && logic.config !== undefined ? logic.id : null;
}

/** The masks for a command of an agent in a topic with these session variables (CommandSecrets.masks). */
export type MasksOf = (agentId: string, vars?: ReadonlyMap<string, string>) => ValueMasks | null;

/** The public form of a ticket (cmd redacted with its topic's masks, body never). */
export function ticketView(t: Ticket, now: number, masks: ValueMasks | null, waitMs?: number): Record<string, unknown> {
  const base = { ticket: t.id, cmd: redactCommand(t.cmd, masks), request_id: t.requestId, via: t.via };
  if (t.startedAt !== null) return { ...base, started_at: iso(t.startedAt), elapsed_ms: now - t.startedAt };
  return { ...base, queued_at: iso(t.queuedAt), waited_ms: now - t.queuedAt, ...(waitMs !== undefined ? { expires_in_ms: Math.max(0, t.queuedAt + waitMs - now) } : {}) };
}

/**
 * The `shell` entry of a topic (behaviour.md §13.2): state, pid and displayed cwd of its shell;
 * `none` for a bash topic without one, null outside bash topics. Never the command text.
 */
export function shellEntry(topicType: string, shell: AnyActorRef | undefined): Record<string, unknown> | null {
  if (topicType !== 'bash') return null;
  if (!shell) return { state: 'none', pid: null, cwd: null };
  const snap = shell.getSnapshot() as Snap;
  const c = snap.context as { pid: number | null; cwd: string; home: string };
  return { state: snap.value, pid: c.pid, cwd: displayPath(c.cwd, c.home) };
}

/** The public detail of one actor's context, per machine. */
function detailOf(machine: string, context: unknown, now: number, children: Record<string, AnyActorRef> = {}, masksOf: MasksOf = () => null): Record<string, unknown> {
  const c = context as Record<string, unknown>;
  switch (machine) {
    case 'topicQueue': {
      const tc = c as { agentId: string; ref: { topic: string; type: string }; running: Ticket | null; waiting: Ticket[]; limits: { waitMs: number }; session: SessionState };
      const masks = tc.running || tc.waiting.length > 0 ? masksOf(tc.agentId, tc.session.vars) : null;
      return {
        agent_id: tc.agentId, topic: tc.ref.topic, topic_type: tc.ref.type,
        running: tc.running ? ticketView(tc.running, now, masks) : null,
        waiting: tc.waiting.map((t) => ticketView(t, now, masks, tc.limits.waitMs)),
        shell: shellEntry(tc.ref.type, children.shell),
      };
    }
    case 'shell': {
      const sc = c as { agentId: string; topic: string; pid: number | null; cwd: string; home: string; transport: string | null };
      return { agent_id: sc.agentId, topic: sc.topic, pid: sc.pid, cwd: displayPath(sc.cwd, sc.home), transport: sc.transport };
    }
    case 'agent':
      return { agent_id: c.id };
    case 'capability':
      return { token_id: c.tokenId, single_use: c.singleUse, expires_at: iso(c.expiresAt as number), reserved: c.reservedBy !== null };
    case 'install':
      // behaviour.md §13.2 `installs` entries: the source as given and the progress, never the request (it holds the home path).
      return { agent_id: c.agentId, install_id: c.installId, name: c.name, source: c.source, files_done: c.filesDone, files_total: c.filesTotal, bytes: c.bytes };
    case 'webhookToken':
      // The fingerprint is not shown either: only whether a token exists and how often it was rotated.
      return { rotations: c.rotations };
    default:
      return {};
  }
}

/** One registry entry for an actor with a system id (a topic's tickets redacted with `masksOf`). */
export function describeActor(systemId: string, ref: AnyActorRef, now: number, masksOf?: MasksOf): LiveActor {
  const machine = machineOf(ref) ?? 'actor';
  const snap = ref.getSnapshot() as Snap;
  return { actor: systemId, machine, state: snap.value ?? snap.status ?? null, detail: detailOf(machine, snap.context, now, snap.children, masksOf) };
}

/** What most inspection events make: nothing (one shared empty list, not an array per event). */
const NO_MESSAGES: readonly InspectorMessage[] = Object.freeze([]);

/** Turns inspection events into §13.3 messages; remembers each actor's last state and children. */
export class InspectionSerialiser {
  private readonly last = new WeakMap<AnyActorRef, { value: unknown; children: Record<string, AnyActorRef>; progress?: string }>();
  /** A ticket's redacted command, made once for its two or three messages (again if the masks changed). */
  private readonly shown = new WeakMap<CommandEvent['ticket'], { cmd: string; masksId: number }>();

  /** `masksOf` gives the masks of a command's agent and topic (behaviour.md §13.4); none: `/set` masking only. */
  constructor(private readonly clock: { now(): number }, private readonly masksOf: (ev: CommandEvent) => ValueMasks | null = () => null) {}

  /**
   * Remember the current state and children of actors that existed before the feed started (and of
   * their children that have no system id, capability shelves, which the registry does not list).
   */
  seed(refs: AnyActorRef[]): void {
    for (const ref of refs) {
      const snap = ref.getSnapshot() as Snap;
      const children = snap.children ?? {};
      this.last.set(ref, { value: snap.value, children });
      const unlisted = Object.values(children).filter((c) => !(c as { systemId?: string }).systemId);
      if (unlisted.length > 0) this.seed(unlisted);
    }
  }

  /** Messages for one XState inspection event (none for most). */
  fromInspection(ev: InspectionEvent): readonly InspectorMessage[] {
    if (ev.type !== '@xstate.snapshot') return NO_MESSAGES;
    const ref = ev.actorRef as AnyActorRef;
    const machine = machineOf(ref);
    const systemId = (ref as { systemId?: string }).systemId;
    if (!machine) return NO_MESSAGES;
    const snap = ev.snapshot as Snap;
    const prev = this.last.get(ref);
    const children = snap.children ?? {};
    let at: string | undefined;
    const stamp = () => (at ??= iso(this.clock.now()));
    const out: InspectorMessage[] = [];
    // An actor without a system id (a capability shelf) has no messages of its own, but its
    // children's stops are read from its snapshot like any parent's.
    if (systemId && ev.event.type === 'xstate.init') out.push({ type: 'actor', actor: systemId, machine, event: 'created', at: stamp() });
    else if (systemId && prev && !sameValue(prev.value, snap.value)) {
      out.push({ type: 'transition', actor: systemId, machine, from: prev.value, to: snap.value, event: ev.event.type, at: stamp() });
    }
    const progress = systemId && machine === 'install' ? this.installMessage(systemId, snap, stamp()) : null;
    if (progress && progress.key !== prev?.progress) out.push(progress.msg);
    // XState replaces a snapshot's children object only when a child is spawned or stopped.
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

  /** The `{"type":"install", …}` message of behaviour.md §13.3 for an install actor's snapshot. */
  private installMessage(actor: string, snap: Snap, at: string): { key: string; msg: InspectorMessage } {
    const d = detailOf('install', snap.context, 0) as { agent_id: string; install_id: string; name: string | null; source: string; files_done: number; files_total: number; bytes: number };
    const msg: InspectorMessage = { type: 'install', actor, ...d, state: snap.value, at };
    return { key: JSON.stringify([snap.value, d.name, d.files_done, d.files_total, d.bytes]), msg };
  }

  /** The message of one topic `command.*` event (cmd redacted; no result text). */
  fromCommand(ev: CommandEvent): InspectorMessage {
    const t = ev.ticket;
    // Masks are cached (CommandSecrets): the same list, and id, until the env store or the session changes.
    const masks = this.masksOf(ev);
    let kept = this.shown.get(t);
    if (kept === undefined || kept.masksId !== (masks?.id ?? 0)) {
      kept = { cmd: redactCommand(t.cmd, masks), masksId: masks?.id ?? 0 };
      this.shown.set(t, kept);
    }
    const cmd = kept.cmd;
    const phase = ev.type.slice('command.'.length) as 'queued' | 'started' | 'refused' | 'finished';
    const at = iso(ev.at);
    // Whole literals rather than a spread of a common base: this runs for every command while watched.
    if (ev.type === 'command.refused') return { type: 'command', phase, agent_id: ev.agentId, topic: ev.topic, ticket: t.id, cmd, via: t.via, at, ok: false, code: ev.reason };
    if (ev.type === 'command.finished') {
      return { type: 'command', phase, agent_id: ev.agentId, topic: ev.topic, ticket: t.id, cmd, via: t.via, at, ok: ev.result.ok, code: ev.result.code, duration_ms: ev.at - (t.startedAt ?? ev.at) };
    }
    return { type: 'command', phase, agent_id: ev.agentId, topic: ev.topic, ticket: t.id, cmd, via: t.via, at };
  }
}
