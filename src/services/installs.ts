import { randomBytes } from 'node:crypto';
import { fromCallback } from 'xstate';
import type { CommandCaller } from '../domain/commandCaller.js';
import { hidePrivatePaths } from '../effects/install/errorText.js';
import { failureOf, type InstallOutcome, type InstallProgress, type InstallRequest } from '../domain/install.js';
import type { PackageRecord } from '../domain/ports.js';
import { sweepPackages } from '../effects/install/staging.js';
import { installProgressOf, type InstallInput, type InstallStageLogic, type StageCommand, type StageReport } from '../machines/install.js';
import type { InstallActor } from '../actors/tree.js';
import type { AgentDirectory } from '../actors/directory.js';
import { runInstall, uninstallPackage, type InstallDeps } from './installRun.js';
import { installOutcome } from './installWait.js';
import { shown } from '../domain/redact.js';
import type { TopicMasks } from './inspectionSerialiser.js';

/** One install's progress as GET /installs lists it and its stream sends it. */
export type InstallProgressEntry = InstallProgress & { request_id: string | null };

/** Hears each change of a running install's shown progress; `requestId` is the raw one, for matching only. */
export type ProgressListener = (agentId: string, p: InstallProgressEntry, requestId: string | null) => void;

/** An install actor's snapshot, as the progress is read from it. */
type InstallSnapshot = Parameters<typeof installProgressOf>[0];

/** A new install id: `ins_` + 16 hex characters (behaviour.md §13.2). */
export function newInstallId(): string {
  return `ins_${randomBytes(8).toString('hex')}`;
}

/**
 * The install service (behaviour.md §7): the work install actors run (`stage`, given to the tree
 * at construction) and what `/install` and `/uninstall` call. Each `/install` is one
 * `install:<install_id>` actor under its agent; this class starts it and waits for its end, which
 * comes once any staging folder is gone.
 */
export class Installs {
  /**
   * `progress` hears each change of a running install's public progress, its end included
   * (`GET /installs/stream`); `masks` gives the values of an agent to keep out of it (topic null: all of them).
   */
  constructor(private readonly directory: AgentDirectory, readonly deps: InstallDeps, private readonly progress?: ProgressListener, private readonly masks: TopicMasks = () => null) {}

  /**
   * The masking point of install listings and streams (behaviour.md §13.4): an install's progress
   * with every string through the one rule, with every value of its agent (an install belongs to
   * the agent, not to a topic). The source is the agent's text (a URL with a token in its query,
   * user-info, a path).
   */
  private shownProgress(snap: InstallSnapshot): InstallProgressEntry {
    return shown(installProgressOf(snap), this.masks(snap.context.agentId, null));
  }

  /** GET /packages: the agent's registry records, sorted by name, as shown (their sources and addresses are the agent's text). */
  packages(agentId: string): Array<Omit<PackageRecord, 'installId'>> {
    return shown(this.deps.store.list(agentId).map(({ installId: _id, ...rest }) => rest), this.masks(agentId, null));
  }

  /** GET /installs: the running installs of an agent as shown, those of `requestId` only when given (matched before masking). */
  list(agentId: string, requestId?: string): InstallProgressEntry[] {
    return this.directory.installSnapshots(agentId)
      .filter((snap) => requestId === undefined || snap.context.requestId === requestId)
      .map((snap) => this.shownProgress(snap));
  }

  /** The install machine's `stage` actor: runs one install; `install.abort` (or the actor's stop) ends the work. */
  readonly stage: InstallStageLogic = fromCallback<StageCommand, InstallInput, StageReport>(({ input, sendBack, receive }) => {
    const stop = new AbortController();
    receive((cmd) => { if (cmd.type === 'install.abort') stop.abort(); });
    runInstall(this.deps, input, (u) => sendBack({ type: 'install.progress', ...u }), stop.signal).then(
      (outcome) => sendBack({ type: 'install.written', outcome }),
      (err: unknown) => {
        const f = failureOf(err);
        sendBack({ type: 'install.failed', code: f.code, message: hidePrivatePaths(f.message, (input.request as InstallRequest).home, this.deps.dataDir) });
      },
    );
    return () => stop.abort();
  });

  install(ctx: CommandCaller, req: InstallRequest, source: string): Promise<InstallOutcome> {
    const input: InstallInput = { installId: newInstallId(), agentId: ctx.agent.id, source, requestId: ctx.requestId ?? null, request: req };
    const actor = this.directory.openInstall(input);
    if (!actor) return Promise.resolve({ ok: false, code: 'CONFLICT', message: `Agent ${input.agentId} was deleted` });
    if (this.progress) this.report(input.agentId, actor, this.progress);
    return installOutcome(actor, ctx.signal);
  }

  /** Tell `progress` the install's progress now and at each change (not at each event: most change nothing it shows). */
  private report(agentId: string, actor: InstallActor, progress: ProgressListener): void {
    let last = '';
    const tell = (snap: InstallSnapshot) => {
      const key = JSON.stringify(installProgressOf(snap));
      if (key === last) return;
      last = key;
      progress(agentId, this.shownProgress(snap), snap.context.requestId);
    };
    tell(actor.getSnapshot());
    actor.subscribe({ next: tell, error: () => undefined });
  }

  uninstall(ctx: CommandCaller, name: string): Promise<{ record: PackageRecord; removed: string | null } | null> {
    return uninstallPackage(this.deps, ctx.agent.id, ctx.agent.home, name);
  }

  /** Start-up recovery of one agent's `~/packages` (behaviour.md §7.6); returns what was repaired. */
  sweep(agentId: string, home: string): string[] {
    return sweepPackages(home, {
      installHex: (name) => {
        const rec = this.deps.store.get(agentId, name);
        if (!rec) return undefined;
        return rec.installId ? rec.installId.slice(4, 12) : null;
      },
    });
  }
}
