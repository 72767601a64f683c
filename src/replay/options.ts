import { isAgentId, VAR_NAME_RE } from '../domain/ids.js';

/** `loom replay` options (behaviour.md §14.3), checked. */
export interface ReplayOptions {
  file: string;
  /** A running daemon to use; absent: start a fresh one and stop it afterwards. */
  against?: string;
  /** Recorded agent → agent to run as. */
  agentMap: Map<string, string>;
  /** Keep the recorded gaps scaled by 1/speed (and the overlaps); absent: one step after another. */
  speed?: number;
  update: boolean;
  /** `--set NAME=value`: values for `${env:NAME}` (before the environment's). */
  values: Map<string, string>;
  json: boolean;
}

/** The options as the command line gives them. */
export interface RawReplayOptions {
  against?: string;
  agentMap?: string[];
  speed?: string;
  update?: boolean;
  set?: string[];
  json?: boolean;
}

/** A usage error of `loom replay` (exit 2). */
export class ReplayUsageError extends Error {}

function agentMap(items: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of items.flatMap((s) => s.split(','))) {
    const [from, to, ...rest] = pair.split('=');
    if (rest.length > 0 || !isAgentId(from) || !isAgentId(to)) throw new ReplayUsageError(`--agent-map wants recorded=agent pairs of agent ids (got "${pair}")`);
    out.set(from, to);
  }
  return out;
}

function values(items: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of items) {
    const eq = item.indexOf('=');
    const name = eq < 0 ? item : item.slice(0, eq);
    if (eq < 0 || !VAR_NAME_RE.test(name)) throw new ReplayUsageError(`--set wants NAME=value with a variable name (got "${item}")`);
    out.set(name, item.slice(eq + 1));
  }
  return out;
}

function againstUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new ReplayUsageError(`--against wants the daemon's URL, e.g. http://127.0.0.1:3923 (got "${raw}")`);
  }
  if (url.protocol !== 'http:') throw new ReplayUsageError(`--against wants an http:// URL (got "${raw}")`);
  return url.origin;
}

/** Check the command line of `loom replay <file>` (behaviour.md §14.3); throws ReplayUsageError. */
export function replayOptions(file: string, raw: RawReplayOptions): ReplayOptions {
  let speed: number | undefined;
  if (raw.speed !== undefined) {
    speed = Number(raw.speed);
    if (!/^\d+(\.\d+)?$/.test(raw.speed) || !(speed > 0)) throw new ReplayUsageError(`--speed wants a number above 0, e.g. 1 or 0.5 (got "${raw.speed}")`);
  }
  return {
    file,
    ...(raw.against !== undefined ? { against: againstUrl(raw.against) } : {}),
    agentMap: agentMap(raw.agentMap ?? []),
    ...(speed !== undefined ? { speed } : {}),
    update: raw.update === true,
    values: values(raw.set ?? []),
    json: raw.json === true,
  };
}
