import { QUEUE_MAX, QUEUE_WAIT_MS, USER_WIRE_QUEUE_MAX, USER_WIRE_QUEUE_WAIT_MS } from './limits.js';
import { REQUEST_LOG_DIR } from './requestLog.js';
import type { ExecHead, QueueLimits } from './ticket.js';
import { parseTopic, parseUserTopic, type TopicRef } from './topic.js';

/**
 * The two wires of protocol v0.1 (spec §9; behaviour.md §11). One process serves one wire, chosen at
 * start (`loom daemon --wire user`, `SVC_WIRE=user`). Both run the same actor runtime; a wire is only
 * the edges, described here as data: the HTTP layer reads the header, resource and field names, the
 * error texts and the /describe document from it, the topic parser its grammar, the queue its limits,
 * the composition root which surfaces mount, and commands the identity noun. Everything not listed in
 * behaviour.md §11 is the agent wire with "agent" read as "user".
 */

/** The wire names (`/describe` `wire`; `--wire`, `SVC_WIRE`). */
export const WIRE_NAMES = ['agent', 'user'] as const;
export type WireName = (typeof WIRE_NAMES)[number];

/**
 * Optional surfaces a feature may belong to; a wire that lacks one does not mount the feature
 * (behaviour.md §11 "absent"). Features of no surface mount on every wire.
 */
export type Surface = 'mcp' | 'events' | 'capabilities';

/** `/describe` limits (behaviour.md §9.3), by name. */
export type LimitName = 'fs.max_bytes' | 'request_body_bytes' | 'webhook_body_bytes' | 'queue_max' | 'queue_wait_ms' | 'field_file_bytes';

/** Everything that differs between the wires (spec §9 table; behaviour.md §11). */
export interface WireDescription {
  name: WireName;
  /** The identity noun: error texts, command output (`/info`, `/topics`), help sentences. */
  noun: 'agent' | 'user';
  /** SVC_PORT default (behaviour.md §1.1). */
  defaultPort: number;
  /** The identity header, as spelled in error texts and CORS. */
  header: 'X-Agent-Id' | 'X-User-Id';
  /** The identity resource (`GET/POST <resource>`, `DELETE <resource>/{id}`). */
  resource: '/agents' | '/users';
  /** Identity field of requests and responses (`/sessions`, `/exec` head, POST and DELETE answers). */
  idField: 'agent_id' | 'user_id';
  /** Fields of the registration body that name the identity, in precedence order. */
  registerIdFields: readonly string[];
  /** The list field of `GET <resource>` and the count field of `/health`. */
  listField: 'agents' | 'users';
  /** Registry file under the data directory. */
  registryFile: 'agents.json' | 'users.json';
  /** Folder under the data directory that holds `<id>/state/` (and default homes). */
  stateRoot: 'agents' | 'users';
  /** True when a registration without `home` gets `<data>/<stateRoot>/<id>/home`. */
  defaultHomes: boolean;
  /** Topic grammar (domain/topic.ts) and its `topic_type` values, in `/topics` filter order. */
  topics: 'agent' | 'user';
  topicTypes: readonly string[];
  /** Topic queue limits (spec §3, §8; behaviour.md §11). */
  queue: QueueLimits;
  /** Optional surfaces this wire serves. */
  surfaces: readonly Surface[];
  /** Command words of absent surfaces: `ERROR(COMMAND_UNSUPPORTED): /<word> is not available …`. */
  unavailableWords: readonly string[];
  /** True when features add their `/describe` capabilities (the user wire lists only its core four). */
  featureCapabilities: boolean;
  /** `/describe` limits shown, in order. */
  limits: readonly LimitName[];
  /** `DELETE <resource>/{id}` answer fields after the id and `deleted` (spec §4.3; behaviour.md §11). */
  deleteCounts: readonly string[];
  /**
   * Names under the data directory that only this wire's processes write, so that daemons of both
   * wires on one data directory share no state (behaviour.md §11): the request log folder, the pid
   * and log files of `loom start`, and the key of the CLI's saved default identity in `cli.json`.
   */
  files: { requestLogs: string; pid: string; daemonLog: string; cliDefault: 'agent' | 'user' };
}

/** The agent wire (spec §1–§8). */
export const AGENT_WIRE: WireDescription = {
  name: 'agent',
  noun: 'agent',
  defaultPort: 3923,
  header: 'X-Agent-Id',
  resource: '/agents',
  idField: 'agent_id',
  registerIdFields: ['agent_id'],
  listField: 'agents',
  registryFile: 'agents.json',
  stateRoot: 'agents',
  defaultHomes: true,
  topics: 'agent',
  topicTypes: ['tab', 'app', 'bash', 'hub'],
  queue: { max: QUEUE_MAX, waitMs: QUEUE_WAIT_MS },
  surfaces: ['mcp', 'events', 'capabilities'],
  unavailableWords: [],
  featureCapabilities: true,
  limits: ['fs.max_bytes', 'request_body_bytes', 'webhook_body_bytes', 'queue_max', 'queue_wait_ms', 'field_file_bytes'],
  deleteCounts: ['revoked_capabilities', 'disposed_sessions'],
  files: { requestLogs: REQUEST_LOG_DIR, pid: 'loom.pid', daemonLog: 'loom.log', cliDefault: 'agent' },
};

/** The earlier user-based wire (spec §9; behaviour.md §11). */
export const USER_WIRE: WireDescription = {
  name: 'user',
  noun: 'user',
  defaultPort: 3100,
  header: 'X-User-Id',
  resource: '/users',
  idField: 'user_id',
  // behaviour.md §11: `id`, with `user_id` accepted because the 0.1-era client sends it.
  registerIdFields: ['id', 'user_id'],
  listField: 'users',
  registryFile: 'users.json',
  stateRoot: 'users',
  defaultHomes: false,
  topics: 'user',
  topicTypes: ['file', 'app', 'web', 'bash'],
  queue: { max: USER_WIRE_QUEUE_MAX, waitMs: USER_WIRE_QUEUE_WAIT_MS },
  surfaces: [],
  unavailableWords: ['events', 'webhook'],
  featureCapabilities: false,
  limits: ['request_body_bytes', 'queue_max', 'queue_wait_ms', 'field_file_bytes'],
  deleteCounts: ['disposed_sessions'],
  files: { requestLogs: `${REQUEST_LOG_DIR}-user`, pid: 'loom-user.pid', daemonLog: 'loom-user.log', cliDefault: 'user' },
};

/** The wire descriptions by name. */
export const WIRES: Readonly<Record<WireName, WireDescription>> = { agent: AGENT_WIRE, user: USER_WIRE };

/** True when `s` names a wire. */
export function isWireName(s: unknown): s is WireName {
  return s === 'agent' || s === 'user';
}

/** The noun with a capital first letter (`Agent`, `User`). */
export function nounTitle(w: WireDescription): string {
  return w.noun[0].toUpperCase() + w.noun.slice(1);
}

/** 400 text when the identity header is missing (spec §7, §9). */
export function headerRequired(w: WireDescription): string {
  return `${w.header} header required`;
}

/** 401 text for an identity that is not registered (spec §7, §9). */
export function unknownIdentity(w: WireDescription, id: string): string {
  return `Unknown ${w.noun}: ${id}`;
}

/** 400 text when `/sessions` gets no identity (spec §7: `agent_id required`; §11: `user_id required`). */
export function idRequired(w: WireDescription): string {
  return `${w.idField} required`;
}

/** 400 text of a malformed `DELETE /sessions/…` path (spec §4.6). */
export function sessionPathError(w: WireDescription): string {
  return `Expected /sessions/:${w.idField}/:topic`;
}

/** The failure message of a command whose surface this wire lacks (behaviour.md §11). */
export function unavailableMessage(w: WireDescription, shown: string): string {
  return `/${shown} is not available in the ${w.name} wire variant`;
}

/** Parse a topic with the wire's grammar (behaviour.md §1.3; §11); null when it does not parse. */
export function parseWireTopic(w: WireDescription, raw: unknown): TopicRef | null {
  return w.topics === 'user' ? parseUserTopic(raw) : parseTopic(raw);
}

/**
 * The spec §2 head of an /exec answer in the wire's names: the user wire carries `user_id` where the
 * agent wire carries `agent_id`, in the same place (behaviour.md §11).
 */
export function wireHead(w: WireDescription, head: ExecHead): ExecHead | Record<string, unknown> {
  if (w.idField === 'agent_id') return head;
  const { ok, code, cmd, request_id, agent_id, topic, topic_type, meta } = head;
  return { ok, code, cmd, request_id, [w.idField]: agent_id, topic, topic_type, meta };
}

/**
 * The variable that carries the identity to commands and CLI actions (behaviour.md §4.6, §8.2):
 * `LOOM_AGENT_ID`, read as `LOOM_USER_ID` on the user wire (§11). `LOOM_USER_HOME` stays the human's home.
 */
export function idEnvName(w: WireDescription): string {
  return `LOOM_${w.noun.toUpperCase()}_ID`;
}
