import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { DaemonUnreachable, LoomClient, NotLoom } from '../client/index.js';
import { isAgentId } from '../domain/ids.js';
import { AGENT_WIRE, WIRES, isWireName, type WireDescription, type WireName } from '../domain/wire.js';

/** Global CLI options (behaviour.md §2.13). */
export interface GlobalOpts {
  port?: string;
  agent?: string;
  json?: boolean;
  /** `--wire agent|user` (behaviour.md §11). */
  wire?: string;
}

/**
 * What a CLI module gets to add its commands: the program and the `agent` command (for
 * `agent capability …`). A new command family is a new file that exports a `CliModule`, listed
 * once in program.ts.
 */
export interface CliParts {
  program: Command;
  agent: Command;
}

/** One command family of the CLI (src/cli/program.ts lists them). */
export type CliModule = (parts: CliParts) => void;

/** The global options as commander parsed them. */
export const globals = (program: Command): GlobalOpts => program.opts<GlobalOpts>();

/**
 * The OS user's home, as os.homedir() answers it: libuv reads $HOME first when it is set (even
 * empty), and only then the password database. Read here so that the one-command form, which
 * needs the home on every call (exec.ts, untilde), does not load node:os for it (the entry bundle
 * loads Node modules on first use, scripts/bundle.mjs).
 */
export function homeDir(): string {
  const home = process.env.HOME;
  return home !== undefined && process.platform !== 'win32' ? home : homedir();
}

/** The data directory the CLI shares with the daemon (pid file, logs, default agent). */
export function dataDir(): string {
  return process.env.SVC_DATA_DIR && process.env.SVC_DATA_DIR !== '' ? process.env.SVC_DATA_DIR : join(homeDir(), '.loom');
}

/** A usage error: the CLI prints it and exits 2 (behaviour.md §2.13). */
export class UsageError extends Error {}

/**
 * A failure the CLI reports as `{error, code, message}` (stderr, exit 1 unless `exit` says
 * otherwise): `error` is one line, `message` the detail or the way out.
 */
export class CliFailure extends Error {
  constructor(readonly failure: { error: string; code: string; message?: string }, readonly exit = 1) {
    super(failure.error);
  }
}

/**
 * The wire of the daemon the CLI talks to: `--wire` > SVC_WIRE (as `loom daemon` reads them,
 * behaviour.md §11), or undefined when neither says: the client then detects it from /describe
 * the first time the daemon refuses a request in the agent wire's form.
 */
export function cliWire(opts: GlobalOpts): WireName | undefined {
  const fromFlag = opts.wire !== undefined;
  const raw = opts.wire ?? (process.env.SVC_WIRE ? process.env.SVC_WIRE : undefined);
  if (raw === undefined) return undefined;
  if (isWireName(raw)) return raw;
  throw new UsageError(fromFlag ? `loom: invalid --wire "${raw}" (use agent or user)` : `loom: invalid SVC_WIRE "${raw}" (use agent or user)`);
}

/**
 * The port: `--port` > SVC_PORT > 3923 (3100 when the wire is user, behaviour.md §11), an integer
 * 1–65535 as the daemon demands (behaviour.md §1.1).
 */
export function cliPort(opts: GlobalOpts): number {
  // Checked first, whatever the port: a bad --wire is a usage error on every command.
  const wire = cliWire(opts);
  const fromFlag = opts.port !== undefined;
  const raw = opts.port ?? process.env.SVC_PORT ?? String(WIRES[wire ?? 'agent'].defaultPort);
  const port = Number(raw);
  if (/^\d+$/.test(raw) && port >= 1 && port <= 65535) return port;
  throw new UsageError(fromFlag ? `loom: invalid --port "${raw}" (use 1–65535)` : `loom: invalid SVC_PORT "${raw}"`);
}

/** The base URL of the daemon the options name. */
export const baseUrl = (opts: GlobalOpts): string => `http://127.0.0.1:${cliPort(opts)}`;

/**
 * Agent: `--agent` > LOOM_AGENT_ID > `loom agent use` > `default` (behaviour.md §2.13); with
 * `--wire user` (or SVC_WIRE=user) LOOM_USER_ID, what commands of the user wire export, comes after
 * LOOM_AGENT_ID.
 */
export function cliAgent(opts: GlobalOpts): string {
  if (opts.agent) return opts.agent;
  if (process.env.LOOM_AGENT_ID) return process.env.LOOM_AGENT_ID;
  if (cliWire(opts) === 'user' && process.env.LOOM_USER_ID) return process.env.LOOM_USER_ID;
  const saved = savedDefaults()[WIRES[cliWire(opts) ?? 'agent'].files.cliDefault];
  return typeof saved === 'string' && saved ? saved : 'default';
}

/**
 * `<data>/cli.json`: the default identity `loom agent use` saved for each wire (`agent`, and `user`
 * with `--wire user`: the wires share no identities, behaviour.md §11); `{}` when there is none.
 */
export function savedDefaults(): Record<string, unknown> {
  try {
    const saved = JSON.parse(readFileSync(join(dataDir(), 'cli.json'), 'utf8')) as unknown;
    return typeof saved === 'object' && saved !== null && !Array.isArray(saved) ? Object.assign(Object.create(null) as Record<string, unknown>, saved) : {};
  } catch {
    // No saved default (or an unreadable file): none.
    return {};
  }
}

/**
 * A client for the configured daemon, as the selected agent unless `withAgent` is false; on the
 * wire `cliWire` names, else detecting it (LoomClient 'auto').
 */
export function client(opts: GlobalOpts, withAgent = true): LoomClient {
  return new LoomClient(baseUrl(opts), withAgent ? cliAgent(opts) : undefined, cliWire(opts) ?? 'auto');
}

/**
 * The CLI never registers agents as a side effect (behaviour.md §2.13): an unknown agent is a
 * failure that says how to create it; an id that can never exist says invalid. On the user wire
 * it is a user, and creating one needs a home (behaviour.md §11).
 */
export function agentFailure(id: string, wire: WireDescription = AGENT_WIRE): CliFailure {
  const noun = wire.noun;
  if (!isAgentId(id)) {
    return new CliFailure({ error: `invalid ${noun} id '${id}'`, code: `INVALID_${noun.toUpperCase()}`, message: 'use 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit' });
  }
  const add = wire.defaultHomes ? `loom agent add ${id}` : `loom --wire ${wire.name} agent add ${id} --home <absolute folder>`;
  return new CliFailure({ error: `unknown ${noun} '${id}'`, code: `UNKNOWN_${noun.toUpperCase()}`, message: `create it with: ${add}` });
}

/** A refused HTTP call as a failure: `{error, code: HTTP_<status>, message?}` from the JSON error body. */
export function httpFailure(status: number, body: unknown): CliFailure {
  const b = (typeof body === 'object' && body !== null ? body : {}) as { error?: unknown; message?: unknown };
  return new CliFailure({ error: String(b.error ?? `HTTP ${status}`), code: `HTTP_${status}`, ...(b.message !== undefined ? { message: String(b.message) } : {}) });
}

/** Print a result on stdout: the value as JSON with `--json`, else the text. */
export function print(opts: GlobalOpts, value: unknown, text: string): void {
  process.stdout.write((opts.json ? JSON.stringify(value, null, 2) : text) + '\n');
}

/** Write a failure on stderr: `{error, code, message}` with `--json`, else `loom: <error>; <message>`. */
export function printFailure(opts: GlobalOpts, f: { error: string; code: string; message?: string }): void {
  if (opts.json) process.stderr.write(JSON.stringify(f, null, 2) + '\n');
  else process.stderr.write(`loom: ${f.error}${f.message ? `; ${f.message}` : ''}\n`);
}

/**
 * Run a CLI action and set the exit code (behaviour.md §2.13): 0 ok, 1 failed, 2 usage error,
 * 3 daemon unreachable. Failures go to stderr; `--json` makes them `{error, code, message}`.
 */
export async function guard(opts: GlobalOpts, fn: () => Promise<number | void>): Promise<void> {
  try {
    process.exitCode = (await fn()) ?? 0;
  } catch (err) {
    const json = opts.json === true;
    if (err instanceof UsageError) {
      if (json) printFailure({ json }, { error: err.message.replace(/^loom: /, ''), code: 'USAGE' });
      else process.stderr.write(`${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof NotLoom) {
      const port = new URL(err.baseUrl).port;
      printFailure({ json }, { error: `port ${port} is held by something that is not Loom (${err.what})`, code: 'NOT_LOOM', message: `start Loom on another port (loom --port <n> start), or stop what listens on ${port}` });
      process.exitCode = 3;
    } else if (err instanceof DaemonUnreachable) {
      printFailure({ json }, { error: `daemon not reachable (${err.message})`, code: 'DAEMON_UNREACHABLE', message: 'start it with: loom start' });
      process.exitCode = 3;
    } else if (err instanceof CliFailure) {
      printFailure({ json }, err.failure);
      process.exitCode = err.exit;
    } else {
      printFailure({ json }, { error: (err as Error).message, code: 'INTERNAL_ERROR' });
      process.exitCode = 1;
    }
  }
}

/** Add an `Examples:` block to a command's help (behaviour.md §2.13: every --help has one). */
export function examples(cmd: Command, lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}`);
}
