import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { daemonRunning, dataDirIdentity, MARKER_NAME, markerUsed, parseMark, procStartTicks, setDaemonMarker, type DaemonMark } from './daemonMarker.js';
import { signalIfStarted } from './nativeFd.js';
import { scriptFolderBase } from './shellProcess.js';

/**
 * Processes a daemon leaves behind (behaviour.md §1.1). While a daemon runs, `<data>/daemons/<pid>.<start
 * ticks>` records it; a clean stop removes the record, a crash (`kill -9`, power loss) leaves it. At
 * start-up a left record means an earlier daemon died: /proc is scanned once for processes whose
 * environment carries its marker for this data directory (effects/daemonMarker.ts), and each is
 * SIGKILLed, checked against its own start time so a reused pid is never signalled. With no left
 * record nothing is scanned, so a normal start costs a directory listing.
 */

const RECORDS = 'daemons';
const RECORD_RE = /^(\d+)\.(\d+)$/;

/** The record of a running daemon; written at start-up (0600 in a 0700 folder). */
export function writeDaemonRecord(dataDir: string, mark: DaemonMark): string {
  const dir = join(dataDir, RECORDS);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${mark.pid}.${mark.startTicks}`);
  writeFileSync(file, `${mark.dataDir}:${mark.pid}:${mark.startTicks}\n`, { mode: 0o600 });
  return file;
}

/** Remove a record (clean stop); never throws, it runs on the way out. */
export function removeDaemonRecord(file: string): void {
  rmSync(file, { force: true });
}

/** Records of daemons that no longer run (their pid is gone or started at another tick). */
function deadRecords(dataDir: string): Array<{ file: string; pid: number; startTicks: number }> {
  let names: string[];
  try {
    names = readdirSync(join(dataDir, RECORDS));
  } catch {
    return [];
  }
  const dead = [];
  for (const name of names) {
    const m = RECORD_RE.exec(name);
    if (!m) continue;
    const rec = { file: join(dataDir, RECORDS, name), pid: Number(m[1]), startTicks: Number(m[2]) };
    if (!daemonRunning(rec)) dead.push(rec);
  }
  return dead;
}

/** The marker in a process's environment, or null (gone, not ours to read, no marker). */
function markOf(pid: number): DaemonMark | null {
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return null;
  }
  const key = `${MARKER_NAME}=`;
  let at = 0;
  if (!environ.startsWith(key)) {
    const i = environ.indexOf(`\0${key}`);
    if (i < 0) return null;
    at = i + 1;
  }
  const end = environ.indexOf('\0', at);
  return parseMark(environ.slice(at + key.length, end < 0 ? undefined : end));
}

/** SIGKILL `pid` if it is still the process that started at `ticks`; true when signalled. */
function killIfSame(pid: number, ticks: number): boolean {
  const viaPidfd = signalIfStarted(pid, ticks, constants.signals.SIGKILL);
  if (viaPidfd !== null) return viaPidfd;
  // No pidfd: check, then signal at once (the window is the time between two system calls).
  if (procStartTicks(pid) !== ticks) return false;
  try {
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGKILL every process (but this one) whose marker names data directory `dataDirId` and a daemon
 * `owners` accepts. Returns how many were signalled.
 */
export function killMarked(dataDirId: string, owners: (mark: DaemonMark) => boolean): number {
  let ended = 0;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return 0; // no /proc (not Linux): nothing can be found
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const mark = markOf(pid);
    if (!mark || mark.dataDir !== dataDirId || !owners(mark)) continue;
    const ticks = procStartTicks(pid);
    if (ticks !== null && killIfSame(pid, ticks)) ended++;
  }
  return ended;
}

/**
 * Start-up: end what daemons that died on this data directory left, and drop their records.
 * Returns null when no earlier daemon died (nothing was scanned), else how many processes ended.
 */
export function endLeftovers(dataDir: string, dataDirId: string): number | null {
  const dead = deadRecords(dataDir);
  if (dead.length === 0) return null;
  // Any daemon of this data directory that no longer runs, recorded or not (one scan finds all).
  const ended = killMarked(dataDirId, (m) => !daemonRunning(m));
  for (const d of dead) removeDaemonRecord(d.file);
  return ended;
}

const SHELL_FOLDER_RE = /^loom-shell-(\d+)\.(\d+)-/;

/**
 * Remove the private folders (command script, command pipe) of shells whose daemon no longer runs;
 * their names carry the daemon (effects/daemonMarker.ts shellFolderPrefix). Returns how many.
 */
export function removeDeadShellFolders(base: string): number {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = SHELL_FOLDER_RE.exec(name);
    if (!m || daemonRunning({ pid: Number(m[1]), startTicks: Number(m[2]) })) continue;
    try {
      rmSync(join(base, name), { recursive: true, force: true });
      removed++;
    } catch {
      // Another user's folder in a shared temp folder: not ours to remove.
    }
  }
  return removed;
}

/** A daemon's hold on its data directory's processes (see adoptDataDir). */
export interface ProcessWatch {
  /** Processes ended at start-up; null when no earlier daemon had died. */
  readonly ended: number | null;
  /** Stop: SIGKILL what this daemon's children left (setsid jobs), remove the record. Returns how many (once; then 0). */
  stop(): number;
}

/**
 * Start-up of a daemon on `dataDir` (it must exist): end what dead daemons left, then set this
 * daemon's marker for every child and record it. Any exit that still runs code (a clean stop, an
 * uncaught exception, process.exit) does the same as stop(); only a kill -9 or a lost machine
 * leaves the record for the next start.
 */
export function adoptDataDir(dataDir: string): ProcessWatch {
  const id = dataDirIdentity(dataDir);
  const ended = endLeftovers(dataDir, id);
  removeDeadShellFolders(scriptFolderBase());
  const mark = setDaemonMarker(dataDir);
  const record = writeDaemonRecord(dataDir, mark);
  let stopped = false;
  const stop = (): number => {
    if (stopped) return 0;
    stopped = true;
    const n = markerUsed() ? killMarked(id, (m) => m.pid === mark.pid && m.startTicks === mark.startTicks) : 0;
    removeDaemonRecord(record);
    return n;
  };
  process.once('exit', stop);
  return { ended, stop };
}
