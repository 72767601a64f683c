import { notRegularText } from '../domain/agentFile.js';
import { PACKAGE_NAME_RE } from '../domain/ids.js';
import { classifySource, failureOf, INSTALL_USAGE, type InstallFlags, type InstallOutcome, type ResolvedSource } from '../domain/install.js';
import type { PackageRecord } from '../domain/ports.js';
import { confirm, content, fail, nextLine, type CommandResult } from '../domain/result.js';
import { plural } from '../domain/text.js';
import { displayOf, expandPath, isRefusal, resolveInWorkspace } from '../effects/workspace.js';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseFlags, splitArgs } from './documents/args.js';
import { clearDocument, docData } from './documents/state.js';
import { refusalResult } from './documents/targets.js';
import { columns } from './format.js';
import type { Command, CommandContext, InstallServices } from './types.js';

/**
 * `/install`, `/uninstall`, `/packages` (spec §4.13; behaviour.md §7.1, §7.6 output, §7.7). The
 * command checks the arguments and local paths; the install itself is an actor (src/actors).
 */

const usage = () => fail('INVALID_ARGS', INSTALL_USAGE);
/** A command that needs the install services: COMMAND_UNSUPPORTED in a build without them. */
function installsCommand(name: string, run: (ctx: CommandContext, installs: InstallServices) => Promise<CommandResult>): Command {
  return {
    name,
    run: (ctx) => (ctx.services.installs ? run(ctx, ctx.services.installs) : fail('COMMAND_UNSUPPORTED', 'Installs are not available in this build')),
  };
}

/** Parse the flags (before or after the source) and the one positional source. */
function parseInstallArgs(text: string): { flags: InstallFlags; source: string | null } | CommandResult {
  const args = splitArgs(text);
  if (!args) return fail('INVALID_ARGS', 'Unterminated quote in the arguments');
  const p = parseFlags(args, ['as'], ['app', 'tool', 'link', 'local']);
  if (p.unknown.length > 0 || p.positional.length > 1) return usage();
  if (p.flags.has('link') && p.flags.has('local')) return fail('INVALID_ARGS', 'Use either --link or --local, not both');
  if (p.flags.has('app') && p.flags.has('tool')) return fail('INVALID_ARGS', 'Use either --app or --tool, not both');
  const as = p.flags.get('as');
  if (typeof as === 'string' && !PACKAGE_NAME_RE.test(as)) return fail('INVALID_ARGS', `Invalid package name: ${as}`);
  const flags: InstallFlags = {
    type: p.flags.has('app') ? 'app' : p.flags.has('tool') ? 'tool' : null,
    mode: p.flags.has('link') ? 'link' : p.flags.has('local') ? 'local' : null,
    as: typeof as === 'string' ? as : null,
  };
  return { flags, source: p.positional[0] ?? null };
}

/** A local source under the workspace policy (behaviour.md §1.4, §7.2). */
function localSource(ctx: CommandContext, raw: string): ResolvedSource | CommandResult {
  const { agent, session } = ctx;
  const shown = displayOf(expandPath(raw, agent.home, session.baseDir ?? agent.home), agent.home);
  const ws = resolveInWorkspace(agent, session.baseDir, raw);
  if (isRefusal(ws)) return refusalResult(ws);
  try {
    // stat never opens the file; the read that follows goes through the bounded reader (behaviour.md §16).
    const st = statSync(ws.abs);
    if (!st.isDirectory() && !st.isFile()) return fail('INVALID_PATH', notRegularText(ws.display));
    return { kind: 'local', abs: ws.abs, display: ws.display, isDir: st.isDirectory() };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return fail('NOT_FOUND', `Not found: ${shown}`);
    throw err;
  }
}

/** No source: the current document when it is a local file (behaviour.md §7.1). */
function currentLocalFile(ctx: CommandContext): string | null {
  const cur = docData(ctx.session);
  return cur && cur.loaded.origin === 'local' && cur.loaded.path ? cur.loaded.path : null;
}

/** Resolve the source text into what the install actor gets. */
function resolveSource(ctx: CommandContext, raw: string, flags: InstallFlags): ResolvedSource | CommandResult {
  let kind;
  try {
    kind = classifySource(raw);
  } catch (err) {
    const f = failureOf(err);
    return fail(f.code, f.message);
  }
  if (kind.kind === 'github' && flags.mode === 'link') return fail('INVALID_ARGS', '--link is not supported for GitHub sources');
  return kind.kind === 'local' ? localSource(ctx, kind.raw) : kind;
}

const isResult = (x: unknown): x is CommandResult => typeof x === 'object' && x !== null && 'ok' in x && 'body' in x;

/** The confirmation of behaviour.md §7.6. */
export function installedLines(out: Extract<InstallOutcome, { ok: true }>): string[] {
  const r = out.record;
  const skipped = out.symlinksSkipped > 0 ? `; ${plural(out.symlinksSkipped, 'symlink')} skipped` : '';
  let line: string;
  if (r.mode === 'link') line = `${out.reinstalled ? 'Reinstalled' : 'Linked'} app:${r.name} → ${r.uri} (fetched on every open)`;
  else if (r.mode === 'inplace') line = `${out.reinstalled ? 'Reinstalled' : 'Installed'} app:${r.name} in place → ${out.display}`;
  else line = `${out.reinstalled ? 'Reinstalled' : 'Installed'} app:${r.name} (local, ${plural(r.files ?? 0, 'file')}${skipped}) from ${r.source}`;
  return [line, ...replacedRows(out.previous, r), nextLine(r.type === 'tool' ? [`/open app:${r.name}`, '/open tool'] : [`/open app:${r.name}`])];
}

/**
 * What a reinstall replaced, source and version before and after, aligned (behaviour.md §7.5):
 * `  was: ~/apps/notes  0.1.0  local` / `  now: https://…/manifest.json  0.2.0  link`.
 */
function replacedRows(prev: PackageRecord | undefined, now: PackageRecord): string[] {
  if (!prev) return [];
  const row = (label: string, p: PackageRecord) => [label, p.source, p.version ?? '-', p.mode];
  return columns([row('was:', prev), row('now:', now)]);
}

/** `/install [<source>] [--app|--tool] [--link|--local] [--as <name>]` (behaviour.md §7.1). */
export const installCommand = installsCommand('install', async (ctx, installs) => {
  const parsed = parseInstallArgs(ctx.args);
  if (isResult(parsed)) return parsed;
  const raw = parsed.source ?? currentLocalFile(ctx);
  if (raw === null) return usage();
  const source = resolveSource(ctx, raw, parsed.flags);
  if (isResult(source)) return source;
  const out = await installs.install(ctx, { agentId: ctx.agent.id, home: ctx.agent.home, source, flags: parsed.flags }, raw);
  return out.ok ? confirm(installedLines(out)) : fail(out.code, out.message);
});

/**
 * Sessions of this agent whose current document belongs to a removed package lose it, as `/close`
 * (§7.7): this session by its own change, the others by a `session.closed` event their topic applies.
 */
function forgetPackage(ctx: CommandContext, name: string): void {
  for (const t of ctx.services.topics(ctx.agent.id)) {
    if (t.session.id === ctx.session.id || docData(t.session)?.loaded.packageName !== name) continue;
    ctx.services.changeSession(ctx.agent.id, t.session.ref.topic, t.session.id, { type: 'session.closed' });
  }
  if (docData(ctx.session)?.loaded.packageName === name) clearDocument(ctx);
}

/** What `/uninstall` says was removed (behaviour.md §7.7). */
function removedText(ctx: CommandContext, record: PackageRecord, removed: string | null): string {
  if (record.mode === 'link') return 'link removed';
  if (record.mode === 'inplace') return `registration removed; ${displayOf(fileURLToPath(record.uri), ctx.agent.home)} left in place`;
  return removed ? `removed ${displayOf(removed, ctx.agent.home)}` : 'its folder was already gone';
}

/** `/uninstall <name>` (behaviour.md §7.7). */
export const uninstallCommand = installsCommand('uninstall', async (ctx, installs) => {
  const args = splitArgs(ctx.args);
  if (!args || args.length !== 1 || (!args[0].quoted && args[0].text.startsWith('--'))) return fail('INVALID_ARGS', 'Usage: /uninstall <name>');
  const name = args[0].text;
  const notFound = () => fail('NOT_FOUND', `Package not found: ${name}`, { recovery: '/packages' });
  if (!PACKAGE_NAME_RE.test(name)) return notFound();
  let r: Awaited<ReturnType<typeof installs.uninstall>>;
  try {
    r = await installs.uninstall(ctx, name);
  } catch (err) {
    const f = failureOf(err);
    return fail(f.code, f.message);
  }
  if (!r) return notFound();
  forgetPackage(ctx, name);
  return confirm(`Uninstalled app:${name} (${removedText(ctx, r.record, r.removed)})`);
});

/** `/packages` (behaviour.md §7.7). */
export const packagesCommand: Command = {
  name: 'packages',
  run(ctx) {
    if (ctx.args.trim() !== '') return fail('INVALID_ARGS', 'Usage: /packages');
    const list = ctx.services.packages.list(ctx.agent.id);
    if (list.length === 0) return content('Packages (0)', ['  (none)', nextLine(['/install <source>'])]);
    const rows = list.map((p) => [p.name, p.type, p.mode, p.version ?? '-', p.source]);
    return content(`Packages (${list.length})`, [...columns(rows), nextLine(['/open app:<name>', '/uninstall <name>'])]);
  },
};

/** The package commands, registered by the install feature. */
export const installCommands: Command[] = [installCommand, uninstallCommand, packagesCommand];
