import { randomBytes } from 'node:crypto';

/** behaviour.md §1.2: agent_id (so never `.` or `..`). */
export const AGENT_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** behaviour.md §1.2: topic segment, same rule as agent_id. */
export const SEGMENT_RE = AGENT_ID_RE;
/** behaviour.md §1.2: package name. */
export const PACKAGE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** behaviour.md §1.2: action id. */
export const ACTION_ID_RE = /^[a-z][a-z0-9_-]{0,63}$/;
/** behaviour.md §1.2: session variable and $NAME. */
export const VAR_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** True when `id` is a legal agent_id (behaviour.md §1.2). */
export function isAgentId(id: unknown): id is string {
  return typeof id === 'string' && AGENT_ID_RE.test(id);
}

/** `<prefix>` + base64url of `bytes` random bytes (behaviour.md §1.2 token forms). */
export function randomToken(prefix: string, bytes: number): string {
  return prefix + randomBytes(bytes).toString('base64url');
}
