import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { LoomError } from '../domain/errors.js';
import { shown } from '../domain/redact.js';
import { CliFailure, client, type GlobalOpts } from './common.js';

/** What is at a path, in words, when it is not a regular file. */
function notAFile(st: { isSymbolicLink(): boolean; isDirectory(): boolean; isFIFO(): boolean }): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  return 'not a regular file';
}

/**
 * Write `text` to `target` as a private file (mode 0600 from its creation, never chmod after): a
 * new file beside it opened with O_CREAT|O_EXCL|O_NOFOLLOW, then renamed over `target`, so a reader
 * never sees half a file and an existing file is replaced whole. Whatever is at `target` that is not
 * a regular file (a symbolic link, a FIFO, a directory) is refused, never followed or written through;
 * one swapped in after the check is replaced by the rename, which does not follow it either.
 */
export async function writePrivateFile(target: string, text: string): Promise<void> {
  const st = await lstat(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw new CliFailure({ error: `cannot write ${target} (${err.code ?? err.message})`, code: 'EXPORT_FAILED' });
  });
  if (st && !st.isFile()) {
    throw new CliFailure({ error: `${target} is ${notAFile(st)}; not written`, code: 'EXPORT_FAILED', message: 'export to a new file, or over a regular file' });
  }
  const tmp = join(dirname(resolve(target)), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  let handle;
  try {
    handle = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    throw new CliFailure({ error: `cannot write beside ${target} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, code: 'EXPORT_FAILED' });
  }
  try {
    await handle.writeFile(text);
    await handle.sync();
    await handle.close();
    await rename(tmp, target);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw new CliFailure({ error: `cannot write ${target} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, code: 'EXPORT_FAILED' });
  }
}

/**
 * `loom inspect --export <file>` (behaviour.md §13.8): the daemon's bundle (GET /inspect/export),
 * masked again here by the one rule as `loom inspect --json` does, written with mode 0600.
 */
export async function exportBundle(opts: GlobalOpts, file: string): Promise<number> {
  const r = await client(opts, false).inspectExport();
  if (r.status !== 200) throw new Error(`GET /inspect/export answered HTTP ${r.status}`);
  await writePrivateFile(file, `${JSON.stringify(shown(r.body, null), null, 2)}\n`);
  process.stderr.write(`loom: wrote ${file} (mode 0600); open it with: loom inspect ${file}\n`);
  return 0;
}

/**
 * `loom inspect <file>` (behaviour.md §13.8): serve the page for a recorded file on a free loopback
 * port until SIGINT or SIGTERM; prints the URL (and opens it with `open`). The offline server is
 * loaded only when this command runs (docs/architecture.md: the one `cli -> inspector` edge).
 */
export async function openRecorded(file: string, open: (url: string) => Promise<void>): Promise<number> {
  const { openRecordedFile } = await import('../inspector/offline.js');
  let served;
  try {
    served = await openRecordedFile(file);
  } catch (err) {
    if (err instanceof LoomError) throw new CliFailure({ error: err.message, code: 'NOT_A_BUNDLE' });
    throw err;
  }
  process.stdout.write(`${served.url}\n`);
  process.stderr.write(`loom: serving ${file} (${served.source.kind}, recorded ${served.source.recordedAt}) read-only; Ctrl-C stops\n`);
  const stopped = new Promise<NodeJS.Signals>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  try {
    await open(served.url);
  } catch (err) {
    await served.close();
    throw err;
  }
  await stopped;
  await served.close();
  return 0;
}
