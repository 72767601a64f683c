import { writeSync } from 'node:fs';
import type { PtyProcess as IPty } from './ptyTypes.js';

/*
 * The one place that reads node-pty's internals (its master descriptor and its write queue), for the
 * cost written in docs/adapters.md; test/adapters/nodePty.int.test.ts fails when node-pty changes them.
 * Every function falls back to node-pty's public API when the internals are not there.
 */

/** The PTY master descriptor node-pty keeps (`_fd`), or null in another node-pty. */
export function ptyMasterFd(p: IPty): number | null {
  const fd = (p as unknown as { _fd?: unknown })._fd;
  return typeof fd === 'number' ? fd : null;
}

/**
 * Writes to a PTY master, at once when nothing is queued. node-pty's own write goes through the
 * libuv threadpool (an async fs.write), a cost on the event loop for every command (the bare
 * node-pty loop of bench/bash pays it as well). A command line fits the tty's
 * input buffer, so a write on the master (non-blocking, node-pty sets it so) takes it whole; what
 * it does not take (EAGAIN, a short write) goes to node-pty's queue, and so does every write while
 * that queue holds anything, so bytes never overtake each other.
 */
export function directWrite(p: IPty, fd: number): (data: string) => void {
  const queue = (p as unknown as { _writeStream?: { _writeQueue?: unknown[] } })._writeStream;
  // Another node-pty layout: its own write only.
  if (!Array.isArray(queue?._writeQueue)) return (data) => p.write(data);
  return (data) => {
    if ((queue._writeQueue as unknown[]).length > 0) return p.write(data);
    const bytes = Buffer.from(data, 'utf8');
    let done = 0;
    try {
      done = writeSync(fd, bytes);
    } catch {
      // EAGAIN: the queue waits for room. Anything else (EIO, the shell is gone): node-pty's own
      // write meets the same error and handles it as it always does; the exit arrives separately.
    }
    if (done < bytes.length) p.write(bytes.subarray(done) as unknown as string);
  };
}

