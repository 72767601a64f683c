import { spawn } from 'node:child_process';
import type { InspectorSnapshot } from '../client/index.js';
import { DaemonUnreachable } from '../client/index.js';
import { shown } from '../domain/redact.js';
import { CliFailure, client, examples, globals, guard, UsageError, type CliParts, type GlobalOpts } from './common.js';
import { exportBundle, openRecorded } from './inspectFiles.js';
import { renderTop } from './topView.js';

/** behaviour.md §13.6: `loom top` redraws twice a second. */
const TOP_REFRESH_MS = 500;

/** The inspector page of the configured daemon. */
const pageUrl = (opts: GlobalOpts) => `${client(opts, false).baseUrl}/inspect`;

/** How long an opener may run before it counts as having opened the page (a browser it launched keeps running). */
const OPENER_GRACE_MS = 2000;

/**
 * Open a URL with `$BROWSER` (as gh and npm read it), else the desktop's opener; resolves false when
 * there is none, or when it fails at once (xdg-open on a machine without a browser exits non-zero).
 */
function openInBrowser(url: string): Promise<boolean> {
  const cmd = process.env.BROWSER || (process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open');
  return new Promise((resolve) => {
    const child = spawn(cmd, [url], { stdio: 'ignore', detached: true });
    const timer = setTimeout(() => { child.unref(); resolve(true); }, OPENER_GRACE_MS);
    child.once('error', () => { clearTimeout(timer); resolve(false); });
    child.once('exit', (code) => { clearTimeout(timer); resolve(code === 0); });
  });
}

/** `--open`: open the URL, or fail with NO_BROWSER (exit 1) when there is no browser. */
async function openOrFail(url: string): Promise<void> {
  if (!(await openInBrowser(url))) throw new CliFailure({ error: 'no browser found', code: 'NO_BROWSER', message: 'set $BROWSER, or open the URL above by hand' });
}

/** `loom inspect [<file>] [--open] [--json] [--export <file>]` (behaviour.md §13.6, §13.8). */
async function inspectCommand(opts: GlobalOpts, file: string | undefined, o: { open?: boolean; export?: string }): Promise<number> {
  if (file !== undefined && o.export !== undefined) throw new UsageError('loom: inspect takes a file to open or --export <file>, not both');
  if (o.export !== undefined) return exportBundle(opts, o.export);
  if (file === undefined) return inspect(opts, o);
  if (opts.json) throw new UsageError('loom: --json reads a running daemon; open a recorded file in the page (loom inspect <file>)');
  return openRecorded(file, async (url) => { if (o.open) await openOrFail(url); });
}

/** `loom inspect [--open] [--json]` (behaviour.md §13.6). */
async function inspect(opts: GlobalOpts, o: { open?: boolean }): Promise<number> {
  const c = client(opts, false);
  const r = await c.inspectState();
  if (r.status !== 200) throw new Error(`GET /inspect/state answered HTTP ${r.status}`);
  if (opts.json) {
    // As `loom top`: every string masked again here by the one rule, whatever daemon answered.
    process.stdout.write(`${JSON.stringify(shown(r.body, null), null, 2)}\n`);
    return 0;
  }
  const url = pageUrl(opts);
  process.stdout.write(`${url}\n`);
  if (o.open) await openOrFail(url);
  return 0;
}

/** Fetch one snapshot; a daemon that went away is a problem to show, not a crash. */
async function poll(opts: GlobalOpts): Promise<{ snapshot: InspectorSnapshot | null; problem?: string }> {
  try {
    const r = await client(opts, false).inspectState();
    return r.status === 200 ? { snapshot: r.body } : { snapshot: null, problem: `GET /inspect/state answered HTTP ${r.status}` };
  } catch (err) {
    if (err instanceof DaemonUnreachable) return { snapshot: null, problem: 'daemon not reachable; retrying (start it with: loom start)' };
    throw err;
  }
}

/**
 * `loom top` (behaviour.md §13.6): the inspector's snapshot as a live terminal view, redrawn twice a
 * second on the alternate screen; `q` (or Ctrl-C) quits. Without a terminal it prints one frame.
 */
async function top(opts: GlobalOpts): Promise<number> {
  // `--json` prints exactly one JSON document, whatever the command (README): here the snapshot
  // top would draw, as `loom inspect --json` prints it; no screen, no waiting for `q`.
  if (opts.json) return inspect(opts, {});
  const out = process.stdout;
  const url = pageUrl(opts);
  const frame = async () => {
    const { snapshot, problem } = await poll(opts);
    return renderTop(snapshot, { width: out.columns || 100, url, problem });
  };
  if (!out.isTTY || !process.stdin.isTTY) {
    const first = await poll(opts);
    if (!first.snapshot) throw new DaemonUnreachable(first.problem ?? 'no snapshot');
    out.write(`${renderTop(first.snapshot, { width: out.columns || 100, url, color: false }).join('\n')}\n`);
    return 0;
  }
  out.write('\x1b[?1049h\x1b[?25l');
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const done = new Promise<void>((resolve) => {
    process.stdin.setRawMode(true);
    process.stdin.resume();
    process.stdin.on('data', (d: Buffer) => {
      const key = d.toString();
      if (key === 'q' || key === 'Q' || key === '\x03') resolve();
    });
  });
  const draw = async () => {
    const lines = await frame();
    if (stopped) return;
    out.write(`\x1b[H\x1b[2J${lines.slice(0, Math.max(1, (out.rows || 40) - 1)).join('\n')}\n`);
    timer = setTimeout(() => void draw(), TOP_REFRESH_MS);
  };
  await draw();
  await done;
  stopped = true;
  clearTimeout(timer);
  process.stdin.setRawMode(false);
  process.stdin.pause();
  out.write('\x1b[?25h\x1b[?1049l');
  return 0;
}

/** `loom inspect` and `loom top`: the state inspector from the shell (behaviour.md §13.6). */
export function inspectCli({ program }: CliParts): void {
  examples(program.command('inspect')
    .description('Print the URL of the state inspector page (--open opens it; --json prints the snapshot); with a file, serve a recorded bundle read-only until Ctrl-C')
    .argument('[file]', 'a bundle written by --export (GET /inspect/export): served on a free 127.0.0.1 port, no daemon needed')
    .option('--open', 'open the inspector page in the browser ($BROWSER, else xdg-open/open; exit 1 when there is none)')
    .option('--export <file>', 'write the snapshot and machine catalogue (GET /inspect/export) to <file>, mode 0600'), [
    'loom inspect', 'loom inspect --open', 'loom inspect --json   # agents, topics, queues (GET /inspect/state)',
    'loom inspect --export night.json   # a bundle to attach to a report', 'loom inspect night.json --open   # the page for that bundle, no daemon needed',
  ]).action((file: string | undefined, o: { open?: boolean; export?: string }) => guard(globals(program), () => inspectCommand(globals(program), file, o)));
  examples(program.command('top')
    .description('Live terminal view of agents, topics, running and waiting commands (q quits)'), [
    'loom top', 'loom --port 3924 top', 'loom --json top   # one snapshot, as loom inspect --json',
  ]).action(() => guard(globals(program), () => top(globals(program))));
}
