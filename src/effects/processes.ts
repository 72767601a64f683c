/** What tracking and group kills need of a started child (a ChildProcess or a shellSpawn child). */
export interface GroupLeader {
  readonly pid?: number | undefined;
  once(event: 'exit', listener: () => void): unknown;
}

/**
 * Every child process group Loom started, so shutdown (behaviour.md §1.1: "kill PTYs and child
 * process groups") can end them all.
 */
const live = new Set<GroupLeader>();

/** Track a detached child (its pid is its process-group id) until it exits. */
export function track(child: GroupLeader): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

/** Send a signal to a child's whole process group; ignores groups that are already gone. */
export function killGroup(child: GroupLeader, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Kill every tracked process group (shutdown). */
export function killAll(signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const c of live) killGroup(c, signal);
}
