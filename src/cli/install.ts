import { randomBytes } from 'node:crypto';
import { dirname, sep } from 'node:path';
import type { InstallJson, LoomClient } from '../client/index.js';
import { agentFailure, cliAgent, client, cliWire, examples, globals, guard, httpFailure, print, type CliParts, type GlobalOpts } from './common.js';
import { execOnce, joinWords, untilde } from './exec.js';
import { shellLocalPath } from './localPath.js';

/**
 * `loom install <source> [flags]`, `loom packages`, `loom uninstall <name>`: the slash
 * commands `/install`, `/packages`, `/uninstall` sent through POST /exec in the `app` hub topic (a
 * hub: no document of the user's is replaced, relative paths start at the agent home). While an
 * install runs, its progress comes from the install actor through `GET /installs/stream?request_id=`.
 */

/** The topic the package commands run in. */
export const PACKAGE_TOPIC = 'app';

/**
 * The topic of the package commands on the wire the CLI names (behaviour.md §11): the user wire has
 * no hubs, so they run in its `file:packages` topic (a tab-like topic of the same user).
 */
function packageTopic(opts: GlobalOpts): string {
  return cliWire(opts) === 'user' ? 'file:packages' : PACKAGE_TOPIC;
}

const MiB = 1024 * 1024;

/** `1.5 MiB`, `12 KiB`, `800 B`. */
export function sizeText(bytes: number): string {
  if (bytes >= MiB) return `${(bytes / MiB).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} B`;
}

/** What the progress shows of one install: `weather  12/50 files · 1.2 MiB` (files unknown until planned). */
export function progressWords(p: Pick<InstallJson, 'name' | 'source' | 'files_done' | 'files_total' | 'bytes'>): string {
  const files = p.files_total > 0 ? `${p.files_done}/${p.files_total} files` : 'reading the source';
  return `${p.name ?? p.source}  ${files} · ${sizeText(p.bytes)}`;
}

/** A terminal progress line: `[#########-----------] ` + progressWords, the bar filled by files done. */
export function progressBar(p: Pick<InstallJson, 'name' | 'source' | 'files_done' | 'files_total' | 'bytes'>, width = 24): string {
  const filled = p.files_total > 0 ? Math.min(width, Math.floor((p.files_done / p.files_total) * width)) : 0;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${progressWords(p)}`;
}

/** Where the progress goes: a terminal redraws one line, anything else gets plain lines. */
export interface ProgressSink {
  tty: boolean;
  write(text: string): void;
}

/**
 * Show the progress of the install started by `requestId` on `sink`, as GET /installs/stream sends
 * it, until `stop()`: on a TTY one line redrawn in place (cleared at the end), else a plain line
 * whenever the file count moved (at most one a second, the first after a second). `ready` resolves
 * once the daemon streams, so the install starts after the stream is open and no change is missed;
 * it also resolves when the stream cannot open (the install then runs without progress: the
 * command's own answer says what happened).
 */
export function watchProgress(c: LoomClient, requestId: string, sink: ProgressSink): { ready: Promise<void>; stop(): void } {
  const abort = new AbortController();
  let drawn = false;
  let lastKey = '';
  // Plain lines start after a second: a quick install prints only its answer.
  let lastAt = Date.now();
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => { markReady = resolve; });
  const show = (p: InstallJson) => {
    if (sink.tty) {
      sink.write(`\r\x1b[2K${progressBar(p)}`);
      drawn = true;
      return;
    }
    const key = `${p.files_done}/${p.files_total}`;
    if (key !== lastKey && Date.now() - lastAt >= 1000) {
      sink.write(`installing ${progressWords(p)}\n`);
      lastKey = key;
      lastAt = Date.now();
    }
  };
  void (async () => {
    try {
      for await (const e of c.installStream(requestId, abort.signal)) {
        if (e.event === 'ready') markReady();
        else if (e.event === 'install' && !abort.signal.aborted) show(JSON.parse(e.data) as InstallJson);
      }
    } catch {
      // Refused, unreachable or stopped: no progress to show.
    }
    markReady();
  })();
  return {
    ready,
    stop() {
      abort.abort();
      markReady();
      if (drawn) sink.write('\r\x1b[2K');
      drawn = false;
    },
  };
}

/** The slash command of `loom install`: the source and flags as words, each one value. */
export function installCommandText(source: string, o: InstallOptions): string {
  const words = ['/install', source];
  if (o.app) words.push('--app');
  if (o.tool) words.push('--tool');
  if (o.link) words.push('--link');
  if (o.local) words.push('--local');
  if (o.as !== undefined) words.push('--as', o.as);
  return joinWords(words);
}

interface InstallOptions {
  app?: boolean;
  tool?: boolean;
  link?: boolean;
  local?: boolean;
  as?: string;
}

/** `loom install`: /install with a progress display on stderr (none with --json); exit 1 on failure (INSTALL_FAILED …). */
async function install(opts: GlobalOpts, source: string, o: InstallOptions): Promise<number> {
  // A path of the shell's current folder is sent as it is there; otherwise `~` is the agent home.
  const local = shellLocalPath(source);
  const word = local ?? (await untilde(opts, [source]))[0];
  const requestId = `cli_${randomBytes(8).toString('hex')}`;
  const c = client(opts);
  const progress = opts.json ? null : watchProgress(c, requestId, { tty: process.stderr.isTTY === true, write: (t) => process.stderr.write(t) });
  await progress?.ready;
  try {
    const recovery = local === null ? undefined : (code: string | null) => (code === 'FORBIDDEN' ? allowRecovery(opts, local) : Promise.resolve(null));
    return await execOnce(opts, packageTopic(opts), installCommandText(word, o), { requestId, onAnswer: () => progress?.stop(), recovery });
  } finally {
    progress?.stop();
  }
}

/**
 * The way forward when a path of the shell's folder lies outside the agent's workspace: register the
 * agent again with that folder added to the paths it already has (`--allow` replaces the list).
 */
async function allowRecovery(opts: GlobalOpts, local: string): Promise<string> {
  const id = cliAgent(opts);
  const folder = isInside(local, process.cwd()) ? process.cwd() : dirname(local);
  const r = await client(opts, false).identities().catch(() => ({ status: 0, list: [] }));
  const had = r.list.find((a) => a.id === id)?.allowedPaths ?? [];
  const paths = [...had.filter((p) => p !== folder), folder].map((p) => `"${p.replace(/(["\\$`])/g, '\\$1')}"`);
  return `loom agent add ${id} --allow ${paths.join(' ')}`;
}

const isInside = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/** `loom packages --json`: the registry records from GET /packages. */
async function packagesJson(opts: GlobalOpts): Promise<number> {
  const c = client(opts);
  const r = await c.packages();
  if (r.status === 401) throw agentFailure(cliAgent(opts), c.wire);
  if (r.status !== 200) throw httpFailure(r.status, r.body);
  print(opts, r.body, '');
  return 0;
}

/** The package commands of the CLI (listed in program.ts). */
export function installCli({ program }: CliParts): void {
  const g = () => globals(program);
  examples(
    program.command('install <source>')
      .description('Install a package from a file, a folder, a GitHub repository or a URL (manifest or document).\n'
        + 'A path starting with ./ or ../, or naming a file or folder of the current folder, is that one (sent '
        + "as an absolute path; it must be in the agent's workspace); ~/… and other relative paths are the agent's.")
      .option('--app', 'list it in the app hub (default unless the package says tool)')
      .option('--tool', 'list it in the tool hub')
      .option('--link', 'register a local folder in place, or link a URL (fetched on every open)')
      .option('--local', 'copy the files (the default, except for plain Markdown URLs)')
      .option('--as <name>', 'the local package name'),
    [
      'loom --agent leo install ~/apps/weather',
      'loom --agent leo install ./examples/quickstart/notes.md   # a file of the current folder',
      'loom --agent leo install gh:octo/apps/weather@v1 --as weather',
      'loom --agent leo install https://example.com/weather/manifest.json',
      'loom --json install ./notes.md --as notes   # {"head", "content", "done"}',
    ],
  ).action((source: string, o: InstallOptions) => guard(g(), () => install(g(), source, o)));
  examples(program.command('packages').description("List the agent's installed packages"), [
    'loom --agent leo packages', 'loom --json packages   # {"agent_id", "packages": [{name, type, mode, uri, source, version?, files?, installedAt}]}',
  ]).action(() => guard(g(), () => (g().json ? packagesJson(g()) : execOnce(g(), packageTopic(g()), '/packages'))));
  examples(program.command('uninstall <name>').description('Remove an installed package (its variables are kept)'), ['loom --agent leo uninstall weather'])
    .action((name: string) => guard(g(), () => execOnce(g(), packageTopic(g()), joinWords(['/uninstall', name]))));
}
