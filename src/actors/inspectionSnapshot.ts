import type { AnyActorRef } from 'xstate';
import type { DaemonInfo } from '../commands/types.js';
import type { AgentStore, Clock } from '../domain/ports.js';
import type { SessionState } from '../domain/session.js';
import type { TopicQueueContext } from '../machines/topicQueue.js';
import type { CommandSecrets } from './commandSecrets.js';
import { describeActor, shellEntry, ticketView } from './inspectionMessages.js';
import type { RecentCommand, RecentCommands } from './recentCommands.js';
import type { DaemonActor } from './tree.js';
import { agentSystemId } from '../machines/agent.js';

/** One topic of the snapshot (behaviour.md §13.2). */
export interface TopicInspection {
  topic: string;
  topic_type: string;
  state: unknown;
  running: Record<string, unknown> | null;
  waiting: Array<Record<string, unknown>>;
  doc: { uri: string; title: string | null; current_block: string | null } | null;
  shell: Record<string, unknown> | null;
  recent: RecentCommand[];
}

/** One agent of the snapshot; `extra` fields come from the features (events, capabilities). */
export type AgentInspection = {
  agent_id: string;
  home: string | null;
  webhook: boolean;
  installs: Array<Record<string, unknown>>;
  topics: TopicInspection[];
} & Record<string, unknown>;

/** GET /inspect/state and the first WebSocket message (behaviour.md §13.2). */
export interface InspectionSnapshot {
  at: string;
  version: string;
  uptime_ms: number;
  agents: AgentInspection[];
}

/** What the snapshot is read from: the tree is the authority for everything that runs. */
export interface SnapshotSources {
  root: DaemonActor;
  info: DaemonInfo;
  clock: Clock;
  agents: AgentStore;
  recent: RecentCommands;
  /** The values a shown `cmd` must not hold (behaviour.md §13.4). */
  secrets: CommandSecrets;
  /** Agent-level fields the features add (event counts, capabilities), already public. */
  agentExtras(agentId: string): Record<string, unknown>;
}

type Children = Record<string, AnyActorRef>;
const childrenOf = (ref: AnyActorRef): Children => (ref.getSnapshot() as { children?: Children }).children ?? {};
const systemIdOf = (ref: AnyActorRef): string | undefined => (ref as { systemId?: string }).systemId;
const byKey = <T>(key: (x: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

function docOf(session: SessionState): TopicInspection['doc'] {
  const d = session.doc;
  return d ? { uri: d.uri, title: d.title, current_block: d.currentBlock } : null;
}

function topicOf(ref: AnyActorRef, systemId: string, s: SnapshotSources, now: number): TopicInspection {
  const snap = ref.getSnapshot() as { value: unknown; context: TopicQueueContext };
  const c = snap.context;
  const masks = s.secrets.masks(c.agentId, c.session.vars);
  return {
    topic: c.ref.topic, topic_type: c.ref.type, state: snap.value,
    running: c.running ? ticketView(c.running, now, masks) : null,
    waiting: c.waiting.map((t) => ticketView(t, now, masks, c.limits.waitMs)),
    doc: docOf(c.session),
    shell: shellEntry(c.ref.type, childrenOf(ref).shell),
    recent: s.recent.of(systemId, masks),
  };
}

function agentOf(agentId: string, ref: AnyActorRef | undefined, s: SnapshotSources, now: number): AgentInspection {
  const rec = s.agents.get(agentId);
  const topics: TopicInspection[] = [];
  const installs: Array<Record<string, unknown>> = [];
  // A dormant agent (no actor yet: nothing has touched it since start-up) has no children.
  const children = Object.values(ref ? childrenOf(ref) : {});
  // The env file is looked at once per agent and snapshot (a hand edit since), its topics then use that list.
  if (children.length > 0) s.secrets.masks(agentId, undefined, { recheck: true });
  for (const child of children) {
    const id = systemIdOf(child);
    if (!id) continue;
    if (id.startsWith('topic:')) topics.push(topicOf(child, id, s, now));
    else if (id.startsWith('install:')) {
      // behaviour.md §13.2 `installs` entry: the install's public fields (no agent id: it sits under its agent).
      const { actor: _actor, state, detail: { agent_id: _agent, install_id, name, source, ...progress } } = describeActor(id, child, now);
      installs.push({ install_id, name, source, state, ...progress });
    }
  }
  return {
    agent_id: agentId, home: rec?.home ?? null, webhook: Boolean(rec?.webhookToken),
    ...s.agentExtras(agentId),
    installs, topics: topics.sort(byKey((t) => t.topic)),
  };
}

/**
 * The snapshot of behaviour.md §13.2, read from the actor tree at one instant (every registered
 * agent, its topics with running and waiting tickets, installs, shells) plus the features' agent
 * fields. Everything in it is public: tickets show their redacted first line, never a body (§13.4).
 */
export function inspectionSnapshot(s: SnapshotSources): InspectionSnapshot {
  const now = s.clock.now();
  // The registry lists agents sorted by id; each is read from its actor, when it has one.
  const agents = s.agents.list().map((a) => agentOf(a.id, s.root.system.get(agentSystemId(a.id)) as AnyActorRef | undefined, s, now));
  return { at: new Date(now).toISOString(), version: s.info.version, uptime_ms: Math.max(0, now - s.info.startedAt), agents };
}
