import type { AnyActorRef } from 'xstate';
import { redactCommand, redactText, shown, type ValueMasks } from '../domain/redact.js';
import type { CommandEvent } from '../domain/ticket.js';
import { detailOf, INSPECTOR_IDS, iso, machineOf, type CommandFacts, type InspectorMessage, type Snap } from './inspectionMessages.js';
import type { SnapshotEvent } from '../adapters/xstateSnapshots.js';
import type { SessionDetail } from './topicHistory.js';

/** A session change a topic's history kept (behaviour.md §13.7), as the live feed gets it. */
export interface HistorySessionChange {
  /** The topic's system id. */
  topicId: string;
  agentId: string;
  detail: SessionDetail;
  /** ms since the epoch. */
  at: number;
}

/** The masks of an agent's topic (a null topic: every value of the agent, for a text of no one topic). */
export type TopicMasks = (agentId: string, topic: string | null) => ValueMasks | null;

/**
 * The live message of a kept session change (behaviour.md §13.7):
 * `{"type":"session","actor","event":<the history entry's type>, …its fields,"at"}`; names, never
 * values, and its document's address and title through the one masking rule (§13.4).
 */
export function sessionJson(ev: HistorySessionChange, masks: ValueMasks | null): string {
  const { type, ...fields } = ev.detail;
  return JSON.stringify(shown({ type: 'session', actor: ev.topicId, event: type, ...fields, at: iso(ev.at) }, masks, INSPECTOR_IDS));
}

/**
 * Commands longer than this (a body follows the first line) are written when their event comes
 * rather than when a frame is sent, so the frame does not hold their text (CommandFacts.ticket).
 */
const LAZY_CMD_MAX = 1024;

/** JSON.stringify, typed as what it returns (undefined for undefined, functions, symbols). */
const jsonOf = JSON.stringify as (value: unknown) => string | undefined;

/**
 * `,"name":<value as JSON>`, or nothing when the value has no JSON (undefined: JSON.stringify leaves
 * the key out too). Booleans and finite numbers are written by String, which gives the same text
 * (JSON.stringify would be a runtime call for each of the finished message's three values).
 */
function member(name: string, value: unknown): string {
  const json = typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)) ? String(value) : jsonOf(value);
  return json === undefined ? '' : `,"${name}":${json}`;
}

/** What the serialiser remembers of an actor: its last state (and that state's JSON, once made) and children. */
interface Seen {
  value: unknown;
  /** JSON of `value`, made when a transition needed it (the next transition's `from`). */
  valueJson: string | undefined;
  children: Record<string, AnyActorRef>;
  /** Key of the last install progress sent. */
  progress: string | undefined;
  /** `{"type":"transition","actor":…,"machine":…`, made at the actor's first transition. */
  transitionHead: string | undefined;
}

/** A ticket's part of its command messages: `"agent_id":…,"topic":…,"ticket":…,"cmd":…,"via":…,"request_id":…`, and the masks it was redacted with. */
interface Shown {
  fields: string;
  masksId: number;
}

/** The `{"type":"command","phase":…,` opening of each phase. */
const COMMAND_HEAD: Record<CommandEvent['type'], string> = {
  'command.queued': '{"type":"command","phase":"queued",',
  'command.started': '{"type":"command","phase":"started",',
  'command.refused': '{"type":"command","phase":"refused",',
  'command.finished': '{"type":"command","phase":"finished",',
};

/**
 * The one serialiser of the inspector (behaviour.md §13.3–13.4): every live message that leaves the
 * daemon is made here, as the JSON text of an {@link InspectorMessage}, from what may be shown.
 *
 * Why text and not objects: while a page watches, every command makes two transitions and two or
 * three command messages. Built as objects they would be walked again by JSON.stringify at frame time;
 * here they are written once from pieces kept escaped per actor (its id and machine) and per ticket
 * (agent, topic, ticket, cmd, via), so a message costs a few concatenations and the JSON.stringify
 * of its variable parts (each variable string goes through JSON.stringify: escaping is never by
 * hand). The rarer messages (actor created/stopped, install progress) stay objects, stringified.
 * test/services/inspectionSerialiser.int.test.ts holds the text to the object form, byte for byte.
 *
 * It turns snapshot events and topic `command.*` events into §13.3 messages, remembering each
 * actor's last state and children.
 */
export class InspectionSerialiser {
  private readonly last = new WeakMap<AnyActorRef, Seen>();
  /** A ticket's shown fields, made once for its two or three messages (again if the masks changed). */
  private readonly shown = new WeakMap<CommandEvent['ticket'], Shown>();

  /** `masksOf` gives the masks of an agent's topic (behaviour.md §13.4); none: shapes and `/set` masking only. */
  constructor(private readonly clock: { now(): number }, private readonly masksOf: TopicMasks = () => null) {}

  /**
   * Remember the current state and children of actors that existed before the feed started (and of
   * their children that have no system id, capability shelves, which the registry does not list).
   */
  seed(refs: AnyActorRef[]): void {
    for (const ref of refs) {
      const snap = ref.getSnapshot() as Snap;
      const children = snap.children ?? {};
      this.last.set(ref, { value: snap.value, valueJson: undefined, children, progress: undefined, transitionHead: undefined });
      const unlisted = Object.values(children).filter((c) => !(c as { systemId?: string }).systemId);
      if (unlisted.length > 0) this.seed(unlisted);
    }
  }

  /**
   * The messages (JSON texts, in order) of one `@xstate.snapshot` event, passed to `send`, a
   * transition with its actor's system id; most events make none.
   */
  fromSnapshot(ev: SnapshotEvent, send: (json: string, transitionOf?: string) => void): void {
    const ref = ev.actorRef as AnyActorRef;
    const machine = machineOf(ref);
    if (!machine) return;
    const systemId = (ref as { systemId?: string }).systemId;
    const snap = ev.snapshot as Snap;
    const value = snap.value;
    const children = snap.children ?? {};
    const seen = this.last.get(ref);
    // JSON of `value`, when made (kept while the value stays: the next transition's `from`).
    let valueJson = seen && seen.value === value ? seen.valueJson : undefined;
    let at: string | undefined;
    // An actor without a system id (a capability shelf) has no messages of its own, but its
    // children's stops are read from its snapshot like any parent's.
    if (systemId && ev.event.type === 'xstate.init') {
      at = iso(this.clock.now());
      send(JSON.stringify({ type: 'actor', actor: systemId, machine, event: 'created', at } satisfies InspectorMessage));
    } else if (systemId && seen && seen.value !== value) {
      // Flat machines' values are strings; parallel ones' are new objects each time, the same state when their JSON is.
      const fromJson = seen.valueJson ?? jsonOf(seen.value);
      valueJson = jsonOf(value);
      if (typeof seen.value !== 'object' || typeof value !== 'object' || fromJson !== valueJson) {
        at = iso(this.clock.now());
        send(this.transitionJson(seen, systemId, machine, fromJson, valueJson, ev.event.type, at), systemId);
      }
    }
    let progress: string | undefined;
    if (systemId && machine === 'install') {
      const made = this.installMessage(systemId, snap, (at ??= iso(this.clock.now())));
      progress = made.key;
      if (made.key !== seen?.progress) send(JSON.stringify(made.msg));
    }
    // XState replaces a snapshot's children object only when a child is spawned or stopped.
    if (seen && seen.children !== children) {
      for (const [id, child] of Object.entries(seen.children)) {
        const childId = (child as { systemId?: string }).systemId;
        const childMachine = machineOf(child);
        if (!Object.hasOwn(children, id) && childId && childMachine) {
          send(JSON.stringify({ type: 'actor', actor: childId, machine: childMachine, event: 'stopped', at: (at ??= iso(this.clock.now())) } satisfies InspectorMessage));
        }
      }
    }
    if (!seen) {
      this.last.set(ref, { value, valueJson, children, progress, transitionHead: undefined });
      return;
    }
    // Updated in place: a new record and WeakMap set per snapshot would be a measurable part of a watched command.
    seen.value = value;
    seen.valueJson = valueJson;
    seen.children = children;
    seen.progress = progress;
  }

  /** `{"type":"transition","actor","machine","from","to","event","at"}` of behaviour.md §13.3. */
  private transitionJson(seen: Seen, actor: string, machine: string, fromJson: string | undefined, toJson: string | undefined, event: string, at: string): string {
    seen.transitionHead ??= `{"type":"transition","actor":${JSON.stringify(actor)},"machine":${JSON.stringify(machine)}`;
    const from = fromJson === undefined ? '' : `,"from":${fromJson}`;
    const to = toJson === undefined ? '' : `,"to":${toJson}`;
    return `${seen.transitionHead}${from}${to},"event":${JSON.stringify(event)},"at":"${at}"}`;
  }

  /**
   * The `{"type":"install", …}` message of behaviour.md §13.3 for an install actor's snapshot, through
   * the one masking rule with every value of its agent.
   */
  private installMessage(actor: string, snap: Snap, at: string): { key: string; msg: InspectorMessage } {
    const d = detailOf('install', snap.context, 0) as { agent_id: string; install_id: string; name: string | null; source: string; files_done: number; files_total: number; bytes: number };
    const msg: InspectorMessage = shown({ type: 'install', actor, ...d, state: snap.value, at }, this.masksOf(d.agent_id, null), INSPECTOR_IDS);
    return { key: JSON.stringify([snap.value, d.name, d.files_done, d.files_total, d.bytes]), msg };
  }

  /** The message of one topic `command.*` event, as JSON (see {@link commandJson}). */
  fromCommand(ev: CommandEvent): string {
    return this.commandJson(this.commandFacts(ev));
  }

  /** What a command message is made of, taken now: the masks of this moment, the result's ok and code, never its text. */
  commandFacts(ev: CommandEvent): CommandFacts {
    // Masks are cached (CommandSecrets): the same list, and id, until the env store or the session changes.
    const masks = this.masksOf(ev.agentId, ev.topic);
    const t = ev.ticket;
    const finished = ev.type === 'command.finished';
    const facts: CommandFacts = {
      kind: 'command', type: ev.type, agentId: ev.agentId, topic: ev.topic, ticketId: t.id, ticket: t, at: ev.at, masks,
      ok: finished ? ev.result.ok : ev.type === 'command.refused' ? false : undefined,
      code: finished ? ev.result.code : ev.type === 'command.refused' ? ev.reason : undefined,
      durationMs: finished ? ev.at - (t.startedAt ?? ev.at) : undefined,
      json: undefined,
    };
    if (t.cmd.length > LAZY_CMD_MAX) {
      this.commandJson(facts);
      facts.ticket = null;
    }
    return facts;
  }

  /**
   * The JSON of a command message (cmd redacted; no result text):
   * `{"type":"command","phase","agent_id","topic","ticket","cmd","via","request_id","at"}`, refusals and
   * finished commands then `"ok","code"`, finished ones `"duration_ms"` last. Kept in `f.json`.
   */
  commandJson(f: CommandFacts): string {
    if (f.json !== undefined) return f.json;
    // No JSON yet: the ticket is still held (commandFacts lets it go only once the JSON is written).
    const t = f.ticket as NonNullable<CommandFacts['ticket']>;
    const masksId = f.masks?.id ?? 0;
    let kept = this.shown.get(t);
    if (kept === undefined || kept.masksId !== masksId) {
      const fields = `"agent_id":${JSON.stringify(f.agentId)},"topic":${JSON.stringify(f.topic)},"ticket":${JSON.stringify(t.id)},"cmd":${JSON.stringify(redactCommand(t.cmd, f.masks))}${member('via', t.via)},"request_id":${JSON.stringify(t.requestId === null ? null : redactText(t.requestId, f.masks))}`;
      kept = { fields, masksId };
      this.shown.set(t, kept);
    }
    const head = `${COMMAND_HEAD[f.type]}${kept.fields},"at":"${iso(f.at)}"`;
    if (f.type === 'command.refused') f.json = `${head},"ok":false${member('code', f.code)}}`;
    else if (f.type === 'command.finished') f.json = `${head}${member('ok', f.ok)}${member('code', f.code)}${member('duration_ms', f.durationMs)}}`;
    else f.json = `${head}}`;
    return f.json;
  }
}
