import type { IncomingMessage } from 'node:http';
import { LoomError } from '../domain/errors.js';

/**
 * The daemon seen from inside the sandbox (behaviour.md §15.3). A confined program reaches the
 * daemon only through the egress proxy, which knows the agent by its credential and hands the
 * request to the daemon marked with that agent. Such a request acts as the agent itself, and
 * routes that change agents or the daemon are refused. The mark lives in a WeakMap, so nothing a
 * client sends (a header, a query) can set it.
 */

const marks = new WeakMap<IncomingMessage, string>();

/** behaviour.md §15.3: a request naming another agent. */
export const ACTS_AS_SELF = 'Forbidden: a sandboxed agent acts only as itself';
/** behaviour.md §15.3: a route that changes agents or the daemon. */
export const NOT_FROM_INSIDE = 'Forbidden: not allowed from inside the sandbox';

/** Mark a request as coming from inside the sandbox of `agentId` (the egress proxy only). */
export function markSandboxed(req: IncomingMessage, agentId: string): void {
  marks.set(req, agentId);
}

/** The confined agent a request comes from, or undefined for every other request. */
export function sandboxedAgent(req: IncomingMessage): string | undefined {
  return marks.get(req);
}

/**
 * A path as the router matches it: Express routes ignore letter case and one trailing slash, so
 * `/AGENTS/` reaches the `/agents` handlers; the checks here compare this form, never the raw one.
 */
function routeForm(path: string): string {
  return path.replace(/(.)\/+$/, '$1').toLowerCase();
}

/** Paths whose every use from inside changes agents or the daemon, or reads other agents (the inspector, traces). */
function adminRoute(method: string, rawPath: string, resource: string): boolean {
  const path = routeForm(rawPath);
  if (method === 'POST' && (path === resource || path === `${resource}/`)) return true;
  if (method === 'DELETE' && path.startsWith(`${resource}/`) && path.split('/').length === 3) return true;
  if (path === '/shutdown') return true;
  return path === '/inspect' || path.startsWith('/inspect/') || path === '/traces' || path.startsWith('/traces/');
}

/** A path segment as the router will see it (a malformed escape stays as sent). */
function segment(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Every agent id a request target names: `/<resource>/{id}/…`, `/sessions/{id}/…`, `?agent=`, `?agent_id=`. */
function namedAgents(url: string, resource: string): string[] {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const parts = path.split('/');
  const out: string[] = [];
  const first = `/${parts[1] ?? ''}`.toLowerCase();
  if ((first === resource || first === '/sessions') && parts.length > 2) {
    const id = segment(parts[2]);
    if (id !== undefined && id !== '') out.push(id);
  }
  if (q >= 0) {
    const params = new URLSearchParams(url.slice(q + 1));
    for (const key of ['agent', 'agent_id', 'user_id']) for (const v of params.getAll(key)) out.push(v);
  }
  return out;
}

/**
 * The refusal of a request from inside the sandbox, or null (every other request: null). The
 * identity header, when absent, is set to the agent itself, so `curl` from inside needs no setup.
 * Part of the one entry check (guard.ts `admit`).
 */
export function sandboxRefusal(req: IncomingMessage, wire: { header: string; resource: string }): LoomError | null {
  const self = marks.get(req);
  if (self === undefined) return null;
  const url = req.url ?? '/';
  const path = url.split('?')[0];
  if (adminRoute(req.method ?? 'GET', path, wire.resource)) return new LoomError(403, NOT_FROM_INSIDE);
  const key = wire.header.toLowerCase();
  const given = req.headers[key];
  if (given !== undefined && given !== self) return new LoomError(403, ACTS_AS_SELF);
  if (given === undefined) req.headers[key] = self;
  if (namedAgents(url, wire.resource).some((id) => id !== self)) return new LoomError(403, ACTS_AS_SELF);
  return null;
}

/** A JSON body from inside the sandbox that names another agent (`agent_id`, `user_id`, `id`) → 403. */
export function bodyIdentityRefusal(req: IncomingMessage, body: Record<string, unknown>): LoomError | null {
  const self = marks.get(req);
  if (self === undefined) return null;
  for (const key of ['agent_id', 'user_id', 'agentId']) {
    const v = Object.hasOwn(body, key) ? body[key] : undefined;
    if (v !== undefined && v !== null && v !== self) return new LoomError(403, ACTS_AS_SELF);
  }
  return null;
}
