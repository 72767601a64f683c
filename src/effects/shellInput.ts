import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { makeFifo } from './nativeFd.js';

/**
 * The channel a persistent shell reads its commands from (behaviour.md §8.3): a named pipe in the
 * shell's private folder, made the shell's standard input by its first line. Commands typed on the
 * terminal could be taken by any job reading it (`dd </dev/tty &`), which would leave the shell
 * waiting for a line it never gets; the pipe is reachable only through that folder (0700), and the
 * shell's commands run with stdin /dev/null, so no job holds it by inheritance.
 */
export interface CommandChannel {
  /** Where the shell opens it. */
  readonly path: string;
  /** Queue one line for the shell; false when the pipe could not take it whole (something else fills it). */
  write(line: string): boolean;
  close(): void;
}

/** A FIFO at `<dir>/input`, or null when none can be made (no native helper and no `mkfifo` tool). */
export function openCommandChannel(dir: string): CommandChannel | null {
  const path = join(dir, 'input');
  try {
    if (!makeFifo(path, 0o600)) {
      const r = spawnSync('mkfifo', ['-m', '600', path], { stdio: 'ignore' });
      if (r.status !== 0) return null;
    }
    // Read-write: the open never waits for a reader, and the shell never sees end-of-file while Loom
    // holds it (when the daemon dies, the descriptor closes and the shell reads end-of-file and exits).
    const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
    return {
      path,
      write(line) {
        const bytes = Buffer.from(line);
        try {
          // A line is far below the pipe's 64 KiB and Loom writes one per command: it goes in whole.
          return writeSync(fd, bytes) === bytes.length;
        } catch {
          return false;
        }
      },
      close: () => closeSync(fd),
    };
  } catch {
    return null;
  }
}
