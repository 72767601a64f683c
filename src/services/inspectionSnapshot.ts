import type { DaemonInfo } from '../domain/commandCaller.js';
import type { Clock } from '../domain/ports.js';
import type { SessionState } from '../domain/session.js';
import type { AgentProfile } from '../machines/agent.js';
import type { CommandSecrets } from './commandSecrets.js';
import type { AgentDirectory, TopicView } from '../actors/directory.js';
import { shown } from '../domain/redact.js';
import { INSPECTOR_IDS, shellEntry, ticketView } from './inspectionMessages.js';
import type { RecentCommand, RecentCommands } from './recentCommands.js';
import type { HistoryEntry, TopicHistories } from './topicHistory.js';

/** One topic of the snapshot (behaviour.md §13.2). */
export interface TopicInspection {
  topic: string;
  topic_type: string;
  state: unknown;
  /** Commands that may wait behind the running one (spec §3: 5). */
  queue_limit: number;
  /** How long a command may wait before QUEUE_TIMEOUT (spec §3: 120000). */
  wait_limit_ms: number;
  running: Record<string, unknown> | null;
  waiting: Array<Record<string, unknown>>;
  doc: { uri: string; title: string | null; current_block: string | null } | null;
  shell: Record<string, unknown> | null;
  recent: RecentCommand[];
  /** Where `history` starts: the topic's start, or its oldest kept change once older ones were dropped. */
  history_since: string;
  /** Whether older changes were dropped (only the last 60 are kept). */
  history_truncated: boolean;
  /** The topic's last changes, oldest first (behaviour.md §13.7). */
  history: HistoryEntry[];
}

/** One agent of the snapshot; `extra` fields come from the features (events, capabilities). */
export type AgentInspection = {
  agent_id: string;
  home: string | null;
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
  directory: AgentDirectory;
  info: DaemonInfo;
  clock: Clock;
  recent: RecentCommands;
  history: TopicHistories;
  /** The values a shown `cmd` must not hold (behaviour.md §13.4). */
  secrets: CommandSecrets;
  /** Agent-level fields the features add (event counts, capabilities), already public. */
  agentExtras(agentId: string): Record<string, unknown>;
}


function docOf(session: SessionState): TopicInspection['doc'] {
  const d = session.doc;
  return d ? { uri: d.uri, title: d.title, current_block: d.currentBlock } : null;
}

function topicOf(t: TopicView, s: SnapshotSources, now: number): TopicInspection {
  const c = t.context;
  const masks = s.secrets.masks(c.agentId, c.session.vars);
  // A topic whose actor never started (opened, no command yet) has no changes: its history starts with it.
  const history = s.history.of(t.systemId) ?? { since: c.session.createdAt, truncated: false, entries: [] };
  // The snapshot's masking point for a topic (behaviour.md §13.4): every string of it but its identifiers.
  return shown({
    topic: c.ref.topic, topic_type: c.ref.type, state: t.value,
    queue_limit: c.limits.max, wait_limit_ms: c.limits.waitMs,
    running: c.running ? ticketView(c.running, now, masks) : null,
    waiting: c.waiting.map((w, i) => ({ ...ticketView(w, now, masks, c.limits.waitMs), position: i + 1 })),
    doc: docOf(c.session),
    shell: shellEntry(c.ref.type, t.children.shell),
    recent: s.recent.of(t.systemId, masks),
    history_since: new Date(history.since).toISOString(), history_truncated: history.truncated, history: history.entries,
  }, masks, INSPECTOR_IDS);
}

function agentOf(profile: AgentProfile, s: SnapshotSources, now: number): AgentInspection {
  const agentId = profile.id;
  const views = s.directory.topicSnapshots(agentId);
  // The env file is looked at once per agent and snapshot (a hand edit since), its topics then use that list.
  if (views.length > 0) s.secrets.masks(agentId, undefined, { recheck: true });
  const topics = views.map((t) => topicOf(t, s, now));
  // behaviour.md §13.2 `installs` entry: the install's public fields (no agent id: it sits under its agent).
  const installs = s.directory.installs(agentId).map(({ request_id: _r, ...progress }) => progress);
  // The snapshot's masking point for an agent's own fields, with all its values (its topics are masked above).
  const masks = s.secrets.agentMasks(agentId, views.map((t) => t.context.session.vars));
  const own = shown({ agent_id: agentId, home: profile.home, ...s.agentExtras(agentId), installs }, masks, INSPECTOR_IDS);
  return { ...own, topics };
}

/**
 * The snapshot of behaviour.md §13.2, read from the actor tree at one instant (every registered
 * agent, its topics with running and waiting tickets, installs, shells) plus the features' agent
 * fields. Everything in it is public: tickets show their redacted first line, never a body, and
 * every string an agent controls (document addresses and titles, install sources, history) goes
 * through the one masking rule with its topic's values (§13.4).
 */
export function inspectionSnapshot(s: SnapshotSources): InspectionSnapshot {
  const now = s.clock.now();
  // The registry lists agents sorted by id; each is read from its actor, when it has one.
  const agents = s.directory.profiles().map((a) => agentOf(a, s, now));
  return { at: new Date(now).toISOString(), version: s.info.version, uptime_ms: Math.max(0, now - s.info.startedAt), agents };
}
