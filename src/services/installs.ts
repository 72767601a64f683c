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

/** One install's progress as GET /installs lists it and its stream sends it. */
export type InstallProgressEntry = InstallProgress & { request_id: string | null };

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
   * (`GET /installs/stream`).
   */
  constructor(private readonly directory: AgentDirectory, readonly deps: InstallDeps, private readonly progress?: (agentId: string, p: InstallProgressEntry) => void) {}

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
  private report(agentId: string, actor: InstallActor, progress: (agentId: string, p: InstallProgressEntry) => void): void {
    let last = '';
    const tell = (snap: Parameters<typeof installProgressOf>[0]) => {
      const p = installProgressOf(snap);
      const key = JSON.stringify(p);
      if (key === last) return;
      last = key;
      progress(agentId, p);
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
