import { randomBytes } from 'node:crypto';
import type { CommandContext, InstallServices } from '../commands/types.js';
import type { InstallOutcome, InstallRequest } from '../domain/install.js';
import type { PackageRecord } from '../domain/ports.js';
import { sweepPackages } from '../effects/install/staging.js';
import type { InstallInput, ProgressUpdate } from '../machines/install.js';
import { runInstall, uninstallPackage, wipeStaging, type InstallDeps } from './installRun.js';
import type { LoomSystem } from './system.js';
import { warn, type InstallEffects } from './tree.js';

/** A new install id: `ins_` + 16 hex characters (behaviour.md §13.2). */
export function newInstallId(): string {
  return `ins_${randomBytes(8).toString('hex')}`;
}

/**
 * The install service (behaviour.md §7): the work install actors do (`InstallEffects`, handed to the
 * tree) and what `/install` and `/uninstall` call (`InstallServices`). Each `/install` is one
 * `install:<install_id>` actor under its agent; this class only starts it and waits for its outcome.
 */
export class Installs implements InstallEffects, InstallServices {
  /** The work of each running install, so a wipe waits until nothing more can be written. */
  private readonly running = new Map<string, { settled: Promise<unknown>; dir: string | null }>();
  /** Wipes in progress, so `/install` answers only once an aborted install's staging folder is gone. */
  private readonly wipes = new Map<string, Promise<void>>();

  constructor(private readonly system: LoomSystem, readonly deps: InstallDeps) {}

  run(input: InstallInput, report: (u: ProgressUpdate) => void, signal: AbortSignal): ReturnType<InstallEffects['run']> {
    const entry: { settled: Promise<unknown>; dir: string | null } = { settled: Promise.resolve(), dir: null };
    this.running.set(input.installId, entry);
    const work = runInstall(this.deps, input, (u) => {
      if (u.stagingDir) entry.dir = u.stagingDir;
      report(u);
    }, signal);
    entry.settled = work.then(() => this.running.delete(input.installId), () => undefined);
    return work;
  }

  wipe(installId: string, dir: string | null): void {
    const entry = this.running.get(installId);
    this.running.delete(installId);
    const target = entry?.dir ?? dir;
    const done = (entry?.settled ?? Promise.resolve())
      .then(() => (target ? wipeStaging(target) : undefined))
      .catch((err: unknown) => warn(`removing ${target}`, err))
      .finally(() => this.wipes.delete(installId));
    this.wipes.set(installId, done);
  }

  async install(ctx: CommandContext, req: InstallRequest, source: string): Promise<InstallOutcome> {
    const input: InstallInput = { installId: newInstallId(), agentId: ctx.agent.id, source, requestId: ctx.requestId ?? null, request: req };
    const outcome = await this.system.runInstall(input, ctx.signal);
    await this.wipes.get(input.installId);
    return outcome;
  }

  uninstall(ctx: CommandContext, name: string): Promise<{ record: PackageRecord; removed: string | null } | null> {
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
