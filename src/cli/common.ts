import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DaemonUnreachable, LoomClient } from '../client/index.js';

/** Global CLI options (behaviour.md §2.13). */
export interface GlobalOpts {
  port?: string;
  agent?: string;
  json?: boolean;
}

/** The data directory the CLI shares with the daemon (pid file, log, default agent). */
export function dataDir(): string {
  return process.env.SVC_DATA_DIR && process.env.SVC_DATA_DIR !== '' ? process.env.SVC_DATA_DIR : join(homedir(), '.loom');
}

/** A usage error: the CLI prints the message and exits 2 (behaviour.md §2.13). */
export class UsageError extends Error {}

/** The port: `--port` > SVC_PORT > 3923, an integer 1–65535 as the daemon demands (behaviour.md §1.1). */
export function cliPort(opts: GlobalOpts): number {
  const raw = opts.port ?? process.env.SVC_PORT ?? '3923';
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) throw new UsageError(`loom: invalid SVC_PORT "${raw}"`);
  return port;
}

/** Agent: `--agent` > LOOM_AGENT_ID > `loom agent use` > `default` (behaviour.md §2.13, plus `use`). */
export function cliAgent(opts: GlobalOpts): string {
  if (opts.agent) return opts.agent;
  if (process.env.LOOM_AGENT_ID) return process.env.LOOM_AGENT_ID;
  try {
    const saved = JSON.parse(readFileSync(join(dataDir(), 'cli.json'), 'utf8')) as { agent?: unknown };
    if (typeof saved.agent === 'string' && saved.agent) return saved.agent;
  } catch {
    // No saved default agent: fall through to `default`.
  }
  return 'default';
}

/** A client for the configured daemon. */
export function client(opts: GlobalOpts, withAgent = true): LoomClient {
  return new LoomClient(`http://127.0.0.1:${cliPort(opts)}`, withAgent ? cliAgent(opts) : undefined);
}

/** Run a CLI action, mapping an unreachable daemon to exit 3 (behaviour.md §2.13). */
export async function guard(fn: () => Promise<number | void>): Promise<void> {
  try {
    process.exitCode = (await fn()) ?? 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    if (err instanceof DaemonUnreachable) {
      process.stderr.write(`loom: daemon not reachable (${err.message}); start it with: loom start\n`);
      process.exitCode = 3;
      return;
    }
    process.stderr.write(`loom: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}

/** Print a value as JSON or text. */
export function print(opts: GlobalOpts, value: unknown, text: string): void {
  process.stdout.write((opts.json ? JSON.stringify(value, null, 2) : text) + '\n');
}
