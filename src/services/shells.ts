import type { CommandCaller, TopicStatus } from '../domain/commandCaller.js';
import { displayPath } from '../domain/displayPath.js';
import type { ConfinePlan } from '../domain/sandbox.js';
import type { ShellRunOutcome, ShellStateName, ShellView } from '../domain/shell.js';
import { endAllShells } from '../effects/shellProcess.js';
import { lastRunId, type ShellContext, type ShellFinished } from '../machines/shell.js';
import { ask } from '../actors/ask.js';
import type { AgentDirectory } from '../actors/directory.js';
import type { ShellActor } from '../actors/tree.js';

/** The public view of a shell actor (domain/shell.ts ShellView). */
export function shellView(ref: ShellActor): ShellView {
  const snap = ref.getSnapshot();
  const c: ShellContext = snap.context;
  return { state: snap.value as ShellStateName, pid: c.pid, cwd: c.cwd, transport: c.transport, lastCommand: c.lastCommand };
}

/**
 * The persistent shells of `bash:<name>` topics as commands reach them (behaviour.md §8.3): run a
 * command in the topic's shell (spawned on first use), end it (/close), and the state texts of
 * /topics (§2.11) and the bash hub (§2.12). The shells themselves are actors of the tree
 * (`shell:<agent>/<topic>`, children of their topics).
 */
export class BashShells {
  constructor(private readonly directory: AgentDirectory) {}

  private view(t: TopicStatus): ShellView | null {
    const ref = this.directory.shell(t.session.agentId, t.session.ref.topic);
    return ref && ref.getSnapshot().status === 'active' ? shellView(ref) : null;
  }

  private home(agentId: string): string {
    return this.directory.profile(agentId)?.home ?? '';
  }

  state(t: TopicStatus): string {
    const v = this.view(t);
    if (!v || v.state === 'ended') return 'no shell';
    const alive = v.transport === 'pipe' ? 'shell alive (pipes, no PTY)' : v.state === 'starting' ? 'shell starting' : 'shell alive';
    return `${alive} · cwd ${displayPath(v.cwd, this.home(t.session.agentId))}`;
  }

  hubState(t: TopicStatus): string {
    const v = this.view(t);
    if (!v || v.state === 'ended') return 'no shell';
    const parts = [this.state(t)];
    if (v.pid !== null) parts.push(`pid ${v.pid}`);
    if (v.state === 'running' || v.state === 'interrupting') parts.push(v.state);
    if (v.lastCommand !== null) parts.push(`last: ${v.lastCommand}`);
    return parts.join(' · ');
  }

  closeShell(ctx: CommandCaller): boolean {
    const ref = this.directory.shell(ctx.session.agentId, ctx.session.ref.topic);
    if (!ref || ref.getSnapshot().status !== 'active') return false;
    ref.send({ type: 'shell.close' });
    return true;
  }

  run(ctx: CommandCaller, req: { text: string; timeoutMs: number; env: () => NodeJS.ProcessEnv; confine?: ConfinePlan }): Promise<ShellRunOutcome> {
    const { agentId, ref: topicRef } = ctx.session;
    if (ctx.signal.aborted) return Promise.resolve({ kind: 'closed' });
    const shell = this.directory.openShell(agentId, topicRef.topic, () => ({ agentId, topic: topicRef.topic, home: ctx.agent.home, env: req.env(), ...(req.confine ? { confine: req.confine } : {}) }));
    if (!shell) return Promise.resolve({ kind: 'closed' });
    // The session ended (DELETE /sessions, agent deletion): the topic closes the shell; answer now.
    return ask<typeof shell, ShellRunOutcome>(shell, { type: 'shell.run', text: req.text, timeoutMs: req.timeoutMs }, {
      id: (snap) => lastRunId(snap.context),
      on: 'shell.finished',
      answer: (ev, runId) => ((ev as ShellFinished).runId === runId ? (ev as ShellFinished).outcome : undefined),
      ended: () => ({ kind: 'closed' }),
    }, { signal: ctx.signal, onAbort: () => ({ kind: 'closed' }) });
  }

  /** Daemon shutdown: close every shell, then wait until their process groups are gone (SIGKILL after 2 s). */
  async shutdown(): Promise<void> {
    for (const ref of this.directory.shells()) ref.send({ type: 'shell.close' });
    await endAllShells();
  }
}
