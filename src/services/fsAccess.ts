import { LoomError } from '../domain/errors.js';
import { displayFsPath, insidePrefix, parseFsPath, VERB_OF_METHOD } from '../domain/fsPath.js';
import type { Grant, Verification } from './capabilities.js';

/** What the /fs checks need from the running system. */
export interface FsAccessDeps {
  /** behaviour.md §9.6 step 3 (reserves a single-use token). */
  verify(secret: string): Verification;
  /** The home of an agent, or undefined when it no longer exists. */
  home(agentId: string): string | undefined;
}

/** A request the checks let through: the reserved grant, the agent's home and the parsed path. */
export interface FsAccess {
  grant: Grant;
  home: string;
  segments: string[];
}

const ALLOW = 'PUT, GET, DELETE, HEAD';

/** An /fs refusal with its `reason` (behaviour.md §9.1: error bodies add `reason` on /fs). */
export const fsError = (status: number, error: string, reason: string, headers?: Record<string, string>) =>
  new LoomError(status, error, { extra: { reason }, headers });

/**
 * The checks of one /fs request in the order of behaviour.md §9.6: method, capability presented and
 * valid (a single-use one is reserved here), path legal, verb granted, path inside the scope, agent
 * still there. Throws the refusal (a reserved grant is released first); returns what the operation needs.
 */
export function authorizeFs(deps: FsAccessDeps, method: string, rawPath: string, secret: string): FsAccess {
  const verb = VERB_OF_METHOD[method];
  if (!verb) throw new LoomError(405, `Method not on the system plane: ${method}`, { headers: { Allow: ALLOW } });
  if (secret === '') throw fsError(401, 'Capability required', 'missing');
  const v = deps.verify(secret);
  if (!v.ok) throw fsError(401, `Capability refused: ${v.reason}`, v.reason);
  const { grant } = v;
  try {
    const segments = parseFsPath(rawPath);
    if (segments === null) throw fsError(400, `Illegal path: ${rawPath.replace(/^\//, '')}`, 'invalid_path');
    if (!grant.cap.verbs.includes(verb)) throw fsError(403, `Verb not granted: ${verb}`, 'verb_not_allowed');
    if (!insidePrefix(segments, grant.cap.path_prefix)) throw fsError(403, `Path outside the capability scope: ${displayFsPath(segments)}`, 'path_outside_scope');
    const home = deps.home(grant.cap.agent_id);
    // The agent is gone but the cascade has not reached this token yet: it is as good as revoked.
    if (home === undefined) throw fsError(401, 'Capability refused: revoked', 'revoked');
    return { grant, home, segments };
  } catch (err) {
    grant.fail();
    throw err;
  }
}
