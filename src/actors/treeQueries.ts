import type { TopicStatus } from '../commands/types.js';
import type { InstallProgress } from '../domain/install.js';
import { newSession } from '../domain/session.js';
import { agentSystemId, topicSystemId } from '../machines/agent.js';
import { agentsOf } from '../machines/agentShelf.js';
import { shellSystemId } from '../machines/shell.js';
import type { AgentRef, DaemonActor, InstallRef, ShellRef, TopicRef } from './tree.js';

/**
 * Read-only questions about the actor tree (architecture.md: the tree is the authority for what
 * runs). Kept apart from `LoomSystem`, which changes the tree; each answer is read from the
 * snapshots at one instant. A dormant agent (no actor) has no topics, installs or shells.
 */

/** A topic's child id on its agent starts with `topic:` (machines/agent.ts). */
export const isTopicChild = (id: string): boolean => id.startsWith('topic:');

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The actor of an agent, if it has one (dormant agents do not). */
export function agentActor(root: DaemonActor, agentId: string): AgentRef | undefined {
  return root.system.get(agentSystemId(agentId)) as AgentRef | undefined;
}

/** The actor of (agent, topic), if the topic has run a command. */
export function topicActor(root: DaemonActor, agentId: string, topic: string): TopicRef | undefined {
  return root.system.get(topicSystemId(agentId, topic)) as TopicRef | undefined;
}

/** The topic actors of an agent. */
export function topicsOf(root: DaemonActor, agentId: string): TopicRef[] {
  const agent = agentActor(root, agentId);
  if (!agent) return [];
  return Object.entries(agent.getSnapshot().children).filter(([id]) => isTopicChild(id)).map(([, t]) => t as TopicRef);
}

/** Topics of an agent with queue state, sorted by topic (the topic actors and the dormant records). */
export function topicStatuses(root: DaemonActor, agentId: string): TopicStatus[] {
  const live: TopicStatus[] = topicsOf(root, agentId).map((t) => {
    const { value, context } = t.getSnapshot();
    return { session: context.session, executing: value === 'executing', queueLength: context.waiting.length };
  });
  // A dormant topic shows as the empty session it will start with.
  const records = agentActor(root, agentId)?.getSnapshot().context.dormant.values() ?? [];
  const dormant = [...records].map((d) => ({ session: newSession(agentId, d.ref, d.createdAt), executing: false, queueLength: 0 }));
  return [...live, ...dormant].sort((a, b) => byString(a.session.ref.topic, b.session.ref.topic));
}

/** Open topics (live and dormant) across the agents in the tree. */
export function sessionCount(root: DaemonActor): number {
  let sessions = 0;
  for (const [, ref] of agentsOf(root)) {
    const snap = (ref as AgentRef).getSnapshot();
    sessions += snap.context.dormant.size;
    for (const id of Object.keys(snap.children)) if (isTopicChild(id)) sessions++;
  }
  return sessions;
}

/** Running installs of an agent with their progress (behaviour.md §13.2 `installs`). */
export function installsOf(root: DaemonActor, agentId: string): Array<InstallProgress & { request_id: string | null }> {
  const agent = agentActor(root, agentId);
  if (!agent) return [];
  return Object.entries(agent.getSnapshot().children)
    .filter(([id]) => id.startsWith('install:'))
    .map(([, ref]) => {
      const { value, context: c } = (ref as InstallRef).getSnapshot();
      return {
        install_id: c.installId, name: c.name, source: c.source, state: value as InstallProgress['state'],
        files_done: c.filesDone, files_total: c.filesTotal, bytes: c.bytes, request_id: c.requestId,
      };
    })
    .sort((a, b) => byString(a.install_id, b.install_id));
}

/** The shell of a bash topic, if it has one (behaviour.md §8.3). */
export function shellOf(root: DaemonActor, agentId: string, topic: string): ShellRef | undefined {
  return root.system.get(shellSystemId(agentId, topic)) as ShellRef | undefined;
}

/** Every live shell. */
export function allShells(root: DaemonActor): ShellRef[] {
  return Object.entries(root.system.getAll() as Record<string, ShellRef>).filter(([id]) => id.startsWith('shell:')).map(([, ref]) => ref);
}
