import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errorMessage } from '../domain/errors.js';
import { folderHex, installError, packageIdentity, type InstallOutcome, type InstallRequest } from '../domain/install.js';
import { INSTALL_FILE_BYTES } from '../domain/limits.js';
import type { Clock, EnvStore, PackageRecord, PackageStore } from '../domain/ports.js';
import { cancelled, downloadToFile, packageBudget, tooLargePackage, type Budget, type FetchContext } from '../effects/install/fetch.js';
import { copyLocalFile } from '../effects/install/local.js';
import { commitPackage, createStaging, packageDir, removalRefusal, removePackage, removeTree } from '../effects/install/staging.js';
import { isInside } from '../effects/workspace.js';
import type { InstallInput, ProgressUpdate } from '../machines/install.js';
import { scalarText, parseFrontmatter } from '../sfmd/frontmatter.js';
import { planInstall, type Plan, type PlanFile } from './installPlan.js';

/**
 * The work of one install actor's `staging` state (spec §3 Package install; behaviour.md §7): plan
 * (every path validated before any fetch or write), write the files into the staging folder
 * (streamed, a few at a time, progress reported), then commit under the agent's package lock. Also
 * the uninstall of §7.7, which takes the same lock.
 */
export interface InstallDeps {
  store: PackageStore;
  env: EnvStore;
  clock: Clock;
  /** SVC_GITHUB_API (behaviour.md §1.1). */
  githubApi: string;
  /** `loom/<version>` */
  userAgent: string;
  /** Files fetched at the same time. */
  parallel: number;
  /** Tests shorten it (behaviour.md §1.8: 30 s). */
  fetchTimeoutMs?: number;
  /** The data directory, never named in an error text (failures show it as `<data>`). */
  dataDir?: string;
}

type Success = Extract<InstallOutcome, { ok: true }>;

/**
 * Coalesces progress: at most ten reports a second, and one at the end (`end()`), so readers (GET
 * /installs, the inspector) see the counts move without an actor event per file or chunk (a report
 * per file would be a transition per file).
 */
class Progress {
  private done = 0;
  private bytes = 0;
  private last = 0;
  constructor(private readonly report: (u: ProgressUpdate) => void) {}
  add(n: number): void {
    this.bytes += n;
    this.maybeFlush();
  }
  fileDone(): void {
    this.done++;
    this.maybeFlush();
  }
  /** Report the final counts. */
  end(): void {
    this.last = Date.now();
    this.report({ filesDone: this.done, bytes: this.bytes });
  }
  private maybeFlush(): void {
    if (Date.now() - this.last >= 100) this.end();
  }
}

/** Write one planned file into the staging folder. */
async function writeOne(f: PlanFile, staging: string, o: { ctx: FetchContext; budget: Budget; progress: Progress; dirs: Map<string, Promise<unknown>> }): Promise<void> {
  const dest = join(staging, ...f.path.split('/'));
  // Paths were validated (manifest rules, folder walk); this is the last line of defence.
  if (!isInside(dest, staging) || dest === staging) throw installError(`Invalid package path "${f.path}"`);
  // One mkdir per folder of the package, shared by the lanes (a syscall per file is a visible share of an install).
  const dir = dirname(dest);
  if (!o.dirs.has(dir)) o.dirs.set(dir, mkdir(dir, { recursive: true, mode: 0o755 }));
  await o.dirs.get(dir);
  if ('data' in f) {
    if (f.data.length > INSTALL_FILE_BYTES) throw installError(`Manifest entry ${f.path} is larger than ${INSTALL_FILE_BYTES / 1048576} MiB`);
    o.budget.used += f.data.length;
    if (o.budget.used > o.budget.max) throw tooLargePackage();
    await writeFile(dest, f.data, { flag: 'wx', mode: 0o644 });
    o.progress.add(f.data.length);
  } else if ('local' in f) {
    await copyLocalFile(f.local, dest);
    o.progress.add(f.local.size);
  } else {
    await downloadToFile(f.url, dest, { ctx: o.ctx, budget: o.budget, onBytes: (n) => o.progress.add(n) });
  }
  o.progress.fileDone();
}

/**
 * Write every file, `parallel` at a time. On the first failure the others are aborted and awaited,
 * so nothing is written after this rejects (the wipe that follows sees the final tree).
 */
async function writeAll(plan: Plan, staging: string, o: { ctx: FetchContext; parallel: number; progress: Progress }): Promise<void> {
  // One controller for this install's fetches: the first failure stops the other lanes, and the
  // install's own signal (topic closed, agent deleted) is forwarded once (cheaper than AbortSignal.any).
  const stop = new AbortController();
  const forward = () => stop.abort();
  o.ctx.signal.addEventListener('abort', forward, { once: true });
  if (o.ctx.signal.aborted) stop.abort();
  const ctx: FetchContext = { ...o.ctx, signal: stop.signal, ...(plan.auth ? { auth: plan.auth } : {}) };
  const budget = packageBudget();
  const dirs = new Map<string, Promise<unknown>>([[staging, Promise.resolve()]]);
  let next = 0;
  let first: unknown;
  const lane = async () => {
    while (first === undefined && next < plan.files.length) {
      const f = plan.files[next++];
      try {
        if (ctx.signal.aborted) throw cancelled();
        await writeOne(f, staging, { ctx, budget, progress: o.progress, dirs });
      } catch (err) {
        if (first === undefined) first = o.ctx.signal.aborted ? cancelled() : err;
        stop.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, o.parallel) }, lane));
  o.ctx.signal.removeEventListener('abort', forward);
  if (first !== undefined) throw first;
  o.progress.end();
}

/** The registry record of a plan. */
function recordOf(plan: Plan, o: { name: string; type: 'app' | 'tool'; front: Record<string, unknown>; home: string; installId: string; at: number }): PackageRecord {
  const version = scalarText(o.front.version);
  const description = scalarText(o.front.description)?.split('\n')[0];
  const uri = plan.mode === 'local' ? pathToFileURL(join(packageDir(o.home, o.name), 'string.md')).href : (plan.uri as string);
  return {
    name: o.name, type: o.type, mode: plan.mode, uri, source: plan.source,
    ...(version ? { version } : {}), ...(description ? { description } : {}),
    ...(plan.mode === 'local' ? { files: plan.files.length } : {}),
    installedAt: new Date(o.at).toISOString(), installId: o.installId,
  };
}

/** Run one install to its commit; rejects with an install error (nothing changed then). */
export async function runInstall(deps: InstallDeps, input: InstallInput, report: (u: ProgressUpdate) => void, signal: AbortSignal): Promise<Success> {
  const req = input.request as InstallRequest;
  const ctx: FetchContext = { signal, userAgent: deps.userAgent, ...(deps.fetchTimeoutMs ? { timeoutMs: deps.fetchTimeoutMs } : {}) };
  const plan = await planInstall(req, { env: deps.env, githubApi: deps.githubApi, ctx });
  const front = parseFrontmatter(plan.root.split(/\r?\n/)).data;
  const { name, type } = packageIdentity(req.flags, front, plan.derived);
  report({ name, source: plan.source, filesTotal: plan.files.length });
  const hex = folderHex(input.installId);
  // The staging folder is this work's own: any failure (the install's abort included) wipes it
  // before the failure is reported, so `aborted` leaves nothing behind.
  const staging = plan.mode === 'local' ? createStaging(req.home, name, hex) : null;
  try {
    if (staging) await writeAll(plan, staging, { ctx, parallel: deps.parallel, progress: new Progress(report) });
    return await deps.store.withLock(req.agentId, async () => {
      if (signal.aborted) throw cancelled();
      const prev = deps.store.get(req.agentId, name);
      const record = recordOf(plan, { name, type, front, home: req.home, installId: input.installId, at: deps.clock.now() });
      await commitPackage({ home: req.home, name, hex, staging, replaceFolder: prev?.mode === 'local', register: () => deps.store.put(req.agentId, record) });
      return { ok: true as const, record, reinstalled: prev !== undefined, ...(prev ? { previous: prev } : {}), symlinksSkipped: plan.symlinksSkipped, display: plan.display };
    });
  } catch (err) {
    if (staging) await removeTree(staging).catch((wipe: unknown) => process.emitWarning(`removing ${staging}: ${errorMessage(wipe)}`));
    throw err;
  }
}

/** `/uninstall` (behaviour.md §7.7): the record goes; a local package's folder too. Null when unknown. */
export function uninstallPackage(deps: InstallDeps, agentId: string, home: string, name: string): Promise<{ record: PackageRecord; removed: string | null } | null> {
  return deps.store.withLock(agentId, async () => {
    const record = deps.store.get(agentId, name);
    if (!record) return null;
    if (record.mode !== 'local') {
      deps.store.remove(agentId, name);
      return { record, removed: null };
    }
    const refusal = removalRefusal(home, name, deps.store.list(agentId));
    if (refusal) throw installError(refusal);
    const hex = randomBytes(4).toString('hex');
    const had = await removePackage({ home, name, hex, unregister: () => { deps.store.remove(agentId, name); } });
    return { record, removed: had ? packageDir(home, name) : null };
  });
}
