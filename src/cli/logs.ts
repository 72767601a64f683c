import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { REQUEST_LOG_FILES, REQUEST_LOG_NAME, type RequestLogEntry } from '../domain/requestLog.js';
import { WIRES } from '../domain/wire.js';
import { columns } from '../domain/text.js';
import { cliWire, dataDir, examples, globals, guard, print, type CliParts, type GlobalOpts } from './common.js';

/**
 * The request log as the daemon writes it (src/effects/requestLogFile.ts): current file and rotated
 * ones. The user wire's daemon keeps its own folder (behaviour.md §11), read with `--wire user`.
 */
const logFile = (opts: GlobalOpts) => join(dataDir(), WIRES[cliWire(opts) ?? 'agent'].files.requestLogs, REQUEST_LOG_NAME);

/** One entry as text cells: time, method, status, duration, path, agent, topic, command, [request id]. */
export function logCells(e: RequestLogEntry): string[] {
  const cells = [e.time, e.method, String(e.status), `${e.duration_ms} ms`, e.path, e.agent ?? '-', e.topic ?? '-', e.command ?? '-'];
  return e.request_id !== null && e.request_id !== undefined ? [...cells, `[${e.request_id}]`] : cells;
}

/** Parse complete lines; a line that is not an entry (a torn write) is skipped. */
function entries(lines: string[]): RequestLogEntry[] {
  const out: RequestLogEntry[] = [];
  for (const l of lines) {
    if (l.trim() === '') continue;
    try {
      out.push(JSON.parse(l) as RequestLogEntry);
    } catch {
      // A line cut by a crash mid-write: not an entry.
    }
  }
  return out;
}

/** The last `n` complete lines over the rotated files, oldest first. */
function lastLines(opts: GlobalOpts, n: number): string[] {
  const files = [];
  for (let i = REQUEST_LOG_FILES - 1; i >= 1; i--) files.push(`${logFile(opts)}.${i}`);
  files.push(logFile(opts));
  const lines: string[] = [];
  for (const f of files) {
    if (!existsSync(f)) continue;
    const text = readFileSync(f, 'utf8');
    // The last line may still be being written: only lines ending in \n count.
    lines.push(...text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter((l) => l !== ''));
  }
  return n === 0 ? [] : lines.slice(-n);
}

/** One entry while following (later lines cannot be known, so cells are separated, not aligned). */
const show = (opts: GlobalOpts, e: RequestLogEntry) => process.stdout.write((opts.json ? JSON.stringify(e) : logCells(e).join('  ')) + '\n');

/**
 * Follow the current file from `offset`: new complete lines are printed as they come; a rotation
 * (the file is new or shorter) starts again at the new file's beginning. Runs until interrupted.
 */
async function follow(opts: GlobalOpts, offset: number, signal?: AbortSignal): Promise<void> {
  let pos = offset;
  let ino = existsSync(logFile(opts)) ? statSync(logFile(opts)).ino : -1;
  let partial = '';
  while (!signal?.aborted) {
    await new Promise((r) => setTimeout(r, 250));
    if (!existsSync(logFile(opts))) continue;
    const st = statSync(logFile(opts));
    if (st.ino !== ino || st.size < pos) {
      ino = st.ino;
      pos = 0;
      partial = '';
    }
    if (st.size === pos) continue;
    const buf = Buffer.alloc(st.size - pos);
    const fd = openSync(logFile(opts), 'r');
    try {
      pos += readSync(fd, buf, 0, buf.length, pos);
    } finally {
      closeSync(fd);
    }
    const text = partial + buf.toString('utf8');
    const cut = text.lastIndexOf('\n') + 1;
    partial = text.slice(cut);
    for (const e of entries(text.slice(0, cut).split('\n'))) show(opts, e);
  }
}

function count(text: string): number {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError('give a number of lines, e.g. 50');
  return Number(text);
}

/**
 * `loom logs [-f] [-n <lines>]` (behaviour.md §2.13): the daemon's request log. Reads the files under
 * `<data>/logs/` (`<data>/logs-user/` with `--wire user`), so it works whether the daemon runs or not. `--json`: `{entries: [...]}`, or
 * one entry per line while following.
 */
export async function logs(opts: GlobalOpts, o: { follow?: boolean; lines: number }): Promise<number> {
  const recent = entries(lastLines(opts, o.lines));
  if (!existsSync(logFile(opts)) && !o.follow) {
    process.stderr.write(`loom: no request log yet (${logFile(opts)}); the daemon writes one line per request\n`);
  }
  if (!o.follow) {
    if (opts.json) print(opts, { entries: recent }, '');
    else if (recent.length > 0) print(opts, null, columns(recent.map(logCells), '').join('\n'));
    return 0;
  }
  for (const e of recent) show(opts, e);
  await follow(opts, existsSync(logFile(opts)) ? statSync(logFile(opts)).size : 0);
  return 0;
}

/** `loom logs`. */
export function logsCli({ program }: CliParts): void {
  examples(program.command('logs')
    .description('Show the request log of the daemon: one line per request (time, method, status, duration, path, agent, topic, command)')
    .option('-f, --follow', 'keep printing requests as they come (Ctrl-C to stop)')
    .option('-n, --lines <n>', 'how many recent requests to show', count, 20), [
    'loom logs', 'loom logs -f', 'loom logs -n 100 --json   # {"entries": [...]}',
  ]).action((o: { follow?: boolean; lines: number }) => guard(globals(program), () => logs(globals(program), o)));
}
