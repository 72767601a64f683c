import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config.js';
import { WIRES } from './domain/wire.js';
import { writePidFile } from './stores/pidFile.js';
import { adoptDataDir, closeServer, compose, listen } from './daemon.js';
import { RegistryReadError } from './stores/jsonAdapter.js';
import { SHUTDOWN_GRACE_MS } from './domain/limits.js';
import { shortLine, type RequestLogEntry } from './domain/requestLog.js';
import { tuneHeapAfterStart } from './effects/heapTuning.js';
import { dataDirProblem } from './effects/dataDirCheck.js';

/** How `loom daemon` runs; the last two are hidden flags for `loom replay`'s private daemon. */
export interface DaemonRunOptions {
  port?: string;
  wire?: string;
  quiet?: boolean;
  record?: string;
  sandbox?: string;
  /** Shut down (as on SIGTERM) when stdin reaches its end: the parent holding the pipe is gone. */
  exitWithStdin?: boolean;
  /** After shutting down, remove the data directory (a temp folder made for this daemon alone). */
  removeDataDir?: boolean;
}

/**
 * Run the daemon in the foreground (behaviour.md §1.1): validate the configuration (exit 2),
 * open the registries (exit 1 when unreadable), listen on 127.0.0.1 (exit 1 when the port is in
 * use), print the ready line, and stop cleanly on SIGINT, SIGTERM or POST /shutdown (exit 0).
 */
export async function runDaemon(opts: DaemonRunOptions = {}): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env, { portOverride: opts.port, wire: opts.wire, record: opts.record, sandbox: opts.sandbox });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + '\n');
      process.exit(2);
    }
    throw err;
  }
  // Before anything starts: what a crashed daemon on this data directory left is ended (behaviour.md §1.1).
  try {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    process.stderr.write(`loom: cannot create data directory ${config.dataDir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}\n`);
    process.exit(1);
  }
  // behaviour.md §15.6: one clear line, no stack trace, when the folder is not the daemon user's alone.
  const problem = dataDirProblem(config.dataDir);
  if (problem) {
    process.stderr.write(problem + '\n');
    process.exit(1);
  }
  const processes = adoptDataDir(config.dataDir);
  if (processes.ended !== null) process.stderr.write(`loom: ended ${processes.ended} ${processes.ended === 1 ? 'process' : 'processes'} left by an earlier daemon\n`);
  let stopping = false;
  let stop: (delayMs: number) => void;
  let composition;
  try {
    // In the foreground on a terminal, each request also gets a short line on stderr (--quiet: none).
    const echo = process.stderr.isTTY && !opts.quiet ? (e: RequestLogEntry) => { process.stderr.write(shortLine(e) + '\n'); } : undefined;
    composition = await compose(config, { onShutdown: () => stop(SHUTDOWN_GRACE_MS), requestLog: { echo } });
  } catch (err) {
    if (err instanceof RegistryReadError) {
      process.stderr.write(`loom: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  let server;
  try {
    server = await listen(composition, config.port);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      process.stderr.write(`loom: port ${config.port} is in use\n`);
      process.exit(1);
    }
    throw err;
  }
  const removePid = writePidFile(join(config.dataDir, WIRES[config.wire].files.pid));
  process.on('exit', removePid);
  const s = server;
  const c = composition;
  stop = (delayMs: number) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      void (async () => {
        await c.system.shutdown();
        // Jobs that left their shell's process group (setsid) still carry this daemon's marker.
        processes.stop();
        await closeServer(s);
        if (opts.removeDataDir) rmSync(config.dataDir, { recursive: true, force: true });
        process.exit(0);
      })();
    }, delayMs);
  };
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  if (opts.exitWithStdin) followParent(() => stop(0));
  process.stdout.write(`loom listening on http://127.0.0.1:${config.port}\n`);
  // After the ready line: start-up has loaded and compiled what it needs (see heapTuning.ts).
  tuneHeapAfterStart();
  // What the first request would make (the Express app), made now unless a request came first:
  // the ready line does not wait for it, and a request that arrives meanwhile waits no longer than
  // it would have had it been made before listening.
  setImmediate(() => c.warm());
}

/**
 * Stop when the parent's pipe on stdin closes (its end, or an error). The parent is gone by then, so
 * the pipes to it are closed too: a late write to stdout or stderr must not end the process before
 * the shutdown has stopped the agents' processes (the CLI's EPIPE handler would exit at once).
 */
function followParent(stop: () => void): void {
  const gone = () => {
    for (const stream of [process.stdout, process.stderr]) {
      stream.removeAllListeners('error');
      stream.on('error', () => undefined);
    }
    stop();
  };
  process.stdin.on('end', gone);
  process.stdin.on('error', gone);
  process.stdin.on('data', () => undefined);
}
