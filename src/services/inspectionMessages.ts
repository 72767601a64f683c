import type { AnyActorRef } from 'xstate';
import { displayPath } from '../domain/displayPath.js';
import { redactCommand, redactText, type ValueMasks } from '../domain/redact.js';
import type { SessionState } from '../domain/session.js';
import type { CommandEvent, Ticket } from '../domain/ticket.js';

/**
 * What the inspector shows of the tree (behaviour.md §13.2–13.4): the message shapes, the public
 * detail of each machine's context, and the registry entries; the live messages themselves are
 * made by the one serialiser (inspectionSerialiser.ts) from these. Everything is built field by
 * field from what may be shown: a context is never copied whole (it holds sessions, results and
 * command bodies).
 */

/**
 * A message of behaviour.md §13.3, as the page receives it: its JSON text has these keys in this
 * order. Transitions and commands are written as JSON text directly (inspectionSerialiser.ts), the
 * others are these objects stringified.
 */
export type InspectorMessage =
  | { type: 'actor'; actor: string; machine: string; event: 'created' | 'stopped'; at: string }
  | { type: 'transition'; actor: string; machine: string; from: unknown; to: unknown; event: string; at: string }
  | {
    type: 'command'; phase: 'queued' | 'started' | 'refused' | 'finished'; agent_id: string; topic: string; ticket: string;
    cmd: string; via: string; request_id: string | null; ok?: boolean; code?: string | null; duration_ms?: number; at: string;
  }
  | {
    type: 'install'; actor: string; agent_id: string; install_id: string; name: string | null; source: string;
    state: unknown; files_done: number; files_total: number; bytes: number; at: string;
  }
  // A topic's session change (behaviour.md §13.7): the fields of its history entry, `event` its type.
  | { type: 'session'; actor: string; event: string; at: string; [field: string]: unknown }
  // Beyond §13.3, only on a coalesced feed (`/inspect/ws?coalesce=1`, inspector/coalesce.ts): what its frame left out.
  | { type: 'coalesced'; commands: number; messages: number; at: string };

/**
 * A `command` message of §13.3 before it is written: what its JSON is made of, taken when the event
 * comes (the masks of that moment, §13.4), and no result text. `json` is filled when it is written
 * (InspectionSerialiser.commandJson): a coalesced feed writes only the commands it keeps.
 */
export interface CommandFacts {
  readonly kind: 'command';
  readonly type: CommandEvent['type'];
  readonly agentId: string;
  readonly topic: string;
  readonly ticketId: string;
  /**
   * The ticket while its JSON is not written. A long command (one with a body) is written at once
   * and its ticket let go: a coalesced frame holds thousands of facts for up to a second.
   */
  ticket: Ticket | null;
  readonly at: number;
  readonly masks: ValueMasks | null;
  /** Finished and refused commands. */
  readonly ok: boolean | undefined;
  /** A finished command's result code, a refusal's reason. */
  readonly code: string | null | undefined;
  readonly durationMs: number | undefined;
  json: string | undefined;
}

/**
 * One live message as the feed gets it (inspector/feed.ts): a command's facts, or the JSON of a
 * transition (with its actor's system id) or of any other message.
 */
export type LiveMessage =
  | CommandFacts
  | { readonly kind: 'transition'; readonly actor: string; readonly json: string }
  | { readonly kind: 'other'; readonly json: string };

/**
 * Keys whose strings the inspector shows as they are: agent ids, topic names and system ids are
 * identifiers that key its actors and cards, chosen under their own grammars (behaviour.md §1.2).
 */
export const INSPECTOR_IDS: ReadonlySet<string> = new Set(['agent_id', 'topic', 'actor']);

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
 * messages a second, and Date#toISOString for each shows in its CPU profile: the
 * `YYYY-MM-DDTHH:MM:SS.` part is kept per second and the milliseconds appended, so the command
 * events' times and the clock's reads (which alternate between different milliseconds) both hit it.
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

/** The parts of an actor snapshot the inspector reads. */
export interface Snap {
  value?: unknown;
  status?: string;
  context?: unknown;
  children?: Record<string, AnyActorRef>;
}

/** The machine id of an actor, or null for actors that are not machines (invoked promises). */
export function machineOf(ref: AnyActorRef): string | null {
  const logic = (ref as { logic?: { id?: unknown; config?: unknown } }).logic;
  return logic && typeof logic.id === 'string' && logic.config !== undefined ? logic.id : null;
}

/** The masks for a command of an agent in a topic with these session variables (CommandSecrets.masks). */
export type MasksOf = (agentId: string, vars?: ReadonlyMap<string, string>) => ValueMasks | null;

/** The public form of a ticket (cmd redacted with its topic's masks, body never). */
export function ticketView(t: Ticket, now: number, masks: ValueMasks | null, waitMs?: number): Record<string, unknown> {
  // A client may send anything as its request id, a token too: masked as the request log masks it.
  const base = { ticket: t.id, cmd: redactCommand(t.cmd, masks), request_id: t.requestId === null ? null : redactText(t.requestId, masks), via: t.via };
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
export function detailOf(machine: string, context: unknown, now: number, children: Record<string, AnyActorRef> = {}, masksOf: MasksOf = () => null): Record<string, unknown> {
  const c = context as Record<string, unknown>;
  switch (machine) {
    case 'topicQueue': {
      const tc = c as { agentId: string; ref: { topic: string; type: string }; running: Ticket | null; waiting: Ticket[]; limits: { waitMs: number }; session: SessionState };
      const masks = tc.running || tc.waiting.length > 0 ? masksOf(tc.agentId, tc.session.vars) : null;
      return {
        agent_id: tc.agentId, topic: tc.ref.topic, topic_type: tc.ref.type,
        running: tc.running ? ticketView(tc.running, now, masks) : null,
        waiting: tc.waiting.map((t, i) => ({ ...ticketView(t, now, masks, tc.limits.waitMs), position: i + 1 })),
        shell: shellEntry(tc.ref.type, children.shell),
      };
    }
    case 'shell': {
      const sc = c as { agentId: string; topic: string; pid: number | null; cwd: string; home: string; transport: string | null };
      return { agent_id: sc.agentId, topic: sc.topic, pid: sc.pid, cwd: displayPath(sc.cwd, sc.home), transport: sc.transport };
    }
    case 'agent':
      return { agent_id: (c.profile as { id: string }).id };
    case 'capability':
      return { token_id: c.tokenId, single_use: c.singleUse, expires_at: iso(c.expiresAt as number), reserved: c.reservedBy !== null };
    case 'install':
      // behaviour.md §13.2 `installs` entries: the source as given and the progress, never the request (it holds the home path).
      return { agent_id: c.agentId, install_id: c.installId, name: c.name, source: redactText(c.source as string), files_done: c.filesDone, files_total: c.filesTotal, bytes: c.bytes };
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
