import { readFileSync, statSync } from 'node:fs';

/**
 * The environment marker every process the daemon starts inherits (shells of bash topics, `/exec`,
 * CLI actions): `LOOM_DAEMON=<data dir dev>:<data dir inode>:<daemon pid>:<daemon start ticks>`.
 * A process keeps it across setsid, nohup and double forks, so after a crash the next daemon on the
 * same data directory can find what its earlier instance left (effects/leftoverProcesses.ts). The
 * start ticks (field 22 of /proc/<pid>/stat) tell a running daemon from a reused pid.
 */
export const MARKER_NAME = 'LOOM_DAEMON';

/** A parsed marker. */
export interface DaemonMark {
  /** `<dev>:<inode>` of the data directory. */
  dataDir: string;
  pid: number;
  startTicks: number;
}

let current: string | undefined;
let used = false;

/** Start time of a process in clock ticks since boot (/proc/<pid>/stat field 22); null when it is gone or unreadable. */
export function procStartTicks(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and ')': fields resume after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[19]);
  return Number.isSafeInteger(ticks) ? ticks : null;
}

/** `<dev>:<inode>` of a folder: the same data directory whatever path reaches it. */
export function dataDirIdentity(dataDir: string): string {
  const st = statSync(dataDir);
  return `${st.dev}:${st.ino}`;
}

/** Parse a marker value; null when it is not one. */
export function parseMark(value: string): DaemonMark | null {
  const m = /^(\d+:\d+):(\d+):(\d+)$/.exec(value);
  if (!m) return null;
  const pid = Number(m[2]);
  const startTicks = Number(m[3]);
  return Number.isSafeInteger(pid) && Number.isSafeInteger(startTicks) ? { dataDir: m[1], pid, startTicks } : null;
}

/** True while the daemon a mark names runs (its pid exists and started at the same tick). */
export function daemonRunning(mark: Pick<DaemonMark, 'pid' | 'startTicks'>): boolean {
  return procStartTicks(mark.pid) === mark.startTicks;
}

/**
 * Set this daemon's marker (start-up, before any child is started); it also goes to process.env so
 * that any child inherits it. Returns the mark.
 */
export function setDaemonMarker(dataDir: string): DaemonMark {
  const startTicks = procStartTicks(process.pid) ?? 0;
  const mark = { dataDir: dataDirIdentity(dataDir), pid: process.pid, startTicks };
  current = `${mark.dataDir}:${mark.pid}:${mark.startTicks}`;
  process.env[MARKER_NAME] = current;
  return mark;
}

/**
 * `env` with this daemon's marker, set last so no layer of a child's environment (an agent's
 * variables) can remove or forge it; `env` itself when no marker is set (in-process tests).
 */
export function withMarker(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (current === undefined) return env;
  used = true;
  return { ...env, [MARKER_NAME]: current };
}

/**
 * The name prefix of a shell's private folder: `loom-shell-<daemon pid>.<start ticks>-` once the marker
 * is set, so the folders a crashed daemon left can be told from a running daemon's and removed.
 */
export function shellFolderPrefix(): string {
  const m = current === undefined ? null : parseMark(current);
  return m ? `loom-shell-${m.pid}.${m.startTicks}-` : 'loom-shell-';
}

/** True once a child has been started with the marker (before that, a stop has nothing to look for). */
export function markerUsed(): boolean {
  return used;
}
