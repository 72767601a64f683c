import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { isSandboxMode, type SandboxMode } from './domain/sandbox.js';
import { WIRES, isWireName, type WireName } from './domain/wire.js';

/** Daemon settings from the environment (behaviour.md §1.1). */
export interface DaemonConfig {
  port: number;
  dataDir: string;
  role: string;
  label: string;
  allowedOrigins: string[];
  wire: WireName;
  /** `loom daemon --record <file>` (behaviour.md §14.1). */
  record?: string;
  /** Base URL of the GitHub REST API for GitHub-style installs (SVC_GITHUB_API, behaviour.md §7.3). */
  githubApi: string;
  /** The sandbox mode of agents registered without one (`--sandbox`, SVC_SANDBOX; behaviour.md §15). */
  sandbox: SandboxMode;
}

/** A configuration error: the process exits 2 with this message on stderr. */
export class ConfigError extends Error {}

/**
 * Read and validate the configuration (behaviour.md §1.1); `portOverride` is `--port`, `wire` is
 * `--wire` (either wins over its variable). The wire comes first: it decides the default port
 * (3923 agent, 3100 user; behaviour.md §11).
 */
export function loadConfig(env: NodeJS.ProcessEnv, opts: { portOverride?: string; wire?: string; record?: string; sandbox?: string } = {}): DaemonConfig {
  const rawWire = opts.wire ?? (env.SVC_WIRE !== undefined && env.SVC_WIRE !== '' ? env.SVC_WIRE : 'agent');
  if (!isWireName(rawWire)) {
    throw new ConfigError(opts.wire !== undefined ? `loom: invalid --wire "${rawWire}" (use agent or user)` : `loom: invalid SVC_WIRE "${rawWire}" (use agent or user)`);
  }
  const wire = rawWire;
  const rawPort = opts.portOverride ?? env.SVC_PORT ?? String(WIRES[wire].defaultPort);
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || port < 1 || port > 65535) {
    // Name the setting the user actually gave: the flag when there was one.
    throw new ConfigError(opts.portOverride !== undefined ? `loom: invalid --port "${rawPort}" (use 1–65535)` : `loom: invalid SVC_PORT "${rawPort}"`);
  }
  const role = env.SVC_ROLE ?? 'agent-host';
  if (!/^[a-z][a-z0-9-]{0,31}$/.test(role)) throw new ConfigError(`loom: invalid SVC_ROLE "${role}"`);
  if (opts.record !== undefined) checkRecordFile(opts.record);
  const githubApi = env.SVC_GITHUB_API && env.SVC_GITHUB_API !== '' ? env.SVC_GITHUB_API : 'https://api.github.com';
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(githubApi)) throw new ConfigError(`loom: invalid SVC_GITHUB_API "${githubApi}"`);
  const rawSandbox = opts.sandbox ?? (env.SVC_SANDBOX !== undefined && env.SVC_SANDBOX !== '' ? env.SVC_SANDBOX : 'none');
  if (!isSandboxMode(rawSandbox)) {
    throw new ConfigError(opts.sandbox !== undefined ? `loom: invalid --sandbox "${rawSandbox}" (use none or workspace)` : `loom: invalid SVC_SANDBOX "${rawSandbox}" (use none or workspace)`);
  }
  return {
    port,
    dataDir: env.SVC_DATA_DIR && env.SVC_DATA_DIR !== '' ? env.SVC_DATA_DIR : join(homedir(), '.loom'),
    role,
    label: env.SVC_LABEL ?? 'loom',
    allowedOrigins: (env.SVC_ALLOWED_ORIGINS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    wire,
    ...(opts.record ? { record: opts.record } : {}),
    githubApi,
    sandbox: rawSandbox,
  };
}

/**
 * `--record <file>`: its folder must exist, the path must not be a folder, and an earlier recording
 * there is never written over (a second `loom daemon --record session.jsonl` would silently empty
 * the first session's file): exit 2 before anything starts.
 */
function checkRecordFile(file: string): void {
  const abs = resolve(file);
  if (file === '' || (existsSync(abs) && statSync(abs).isDirectory())) throw new ConfigError(`loom: cannot record to "${file}": not a file path`);
  if (!existsSync(dirname(abs))) throw new ConfigError(`loom: cannot record to "${file}": folder ${dirname(abs)} does not exist`);
  const size = existsSync(abs) ? statSync(abs).size : 0;
  if (size > 0) throw new ConfigError(`loom: cannot record to "${file}": it already holds ${size} bytes (a recording is never written over); move it away or name another file`);
}
