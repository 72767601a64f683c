import { describe, expect, it } from '@jest/globals';
import type { IncomingMessage } from 'node:http';
import { ACTS_AS_SELF, markSandboxed, NOT_FROM_INSIDE, sandboxRefusal } from '../../src/http/sandboxed.js';

/*
 * behaviour.md §15.3 entry check for requests from inside the sandbox, as the router will route
 * them: Express matches paths in any letter case and with one trailing slash, so `/AGENTS/` reaches
 * the `/agents` handlers and must be refused exactly like `/agents`.
 */

const WIRE = { header: 'X-Agent-Id', resource: '/agents' };

/** A request from inside the sandbox of agent `a`. */
function inside(method: string, url: string, headers: Record<string, string> = {}): IncomingMessage {
  const req = { method, url, headers: { ...headers } } as unknown as IncomingMessage;
  markSandboxed(req, 'a');
  return req;
}

/** The status and message of the refusal, or null. */
function refusal(req: IncomingMessage): { status: number; message: string } | null {
  const e = sandboxRefusal(req, WIRE);
  return e ? { status: e.status, message: e.message } : null;
}

describe('behaviour.md §15.3 routes that change agents or the daemon, in every form the router accepts', () => {
  it.each([
    ['POST', '/agents'], ['POST', '/AGENTS'], ['POST', '/Agents/'], ['POST', '/agents?x=1'],
    ['DELETE', '/agents/a'], ['DELETE', '/AGENTS/victim'], ['DELETE', '/agents/a/'],
    ['POST', '/shutdown'], ['POST', '/Shutdown/'], ['GET', '/SHUTDOWN'],
    ['GET', '/inspect/state'], ['GET', '/Inspect/state'], ['GET', '/INSPECT'], ['GET', '/traces'], ['GET', '/Traces/'],
  ])('when %s %s comes from inside, then 403 not allowed from inside the sandbox', (method, url) => {
    expect(refusal(inside(method, url))).toEqual({ status: 403, message: NOT_FROM_INSIDE });
  });
});

describe('behaviour.md §15.3 a request naming another agent, in every form the router accepts', () => {
  it.each([
    ['GET', '/agents/c/events'], ['GET', '/AGENTS/c/events'], ['POST', '/Agents/c/webhook'],
    ['DELETE', '/sessions/c/bash:s'], ['DELETE', '/SESSIONS/c/main'], ['DELETE', '/Sessions/%63/main'],
    ['GET', '/sessions?agent_id=c'], ['GET', '/events/stream?agent=c'], ['GET', '/capabilities?agent_id=c'],
  ])('when %s %s comes from inside, then 403 acts only as itself', (method, url) => {
    expect(refusal(inside(method, url))).toEqual({ status: 403, message: ACTS_AS_SELF });
  });

  it('when the identity header names another agent, then 403 acts only as itself', () => {
    expect(refusal(inside('POST', '/exec', { 'x-agent-id': 'c' }))).toEqual({ status: 403, message: ACTS_AS_SELF });
  });

  it('when the identity header is absent, then the request goes on as the agent itself', () => {
    const req = inside('POST', '/exec');
    expect(refusal(req)).toBeNull();
    expect(req.headers['x-agent-id']).toBe('a');
  });

  it('when the path names the agent itself in another letter case, then it is another agent (ids are case-sensitive)', () => {
    expect(refusal(inside('GET', '/agents/A/events'))).toEqual({ status: 403, message: ACTS_AS_SELF });
    expect(refusal(inside('GET', '/AGENTS/a/events'))).toBeNull();
  });
});

describe('behaviour.md §15.3 requests from outside the sandbox', () => {
  it('when a request is not marked, then none of these rules applies', () => {
    const req = { method: 'POST', url: '/AGENTS', headers: { 'x-agent-id': 'c' } } as unknown as IncomingMessage;
    expect(sandboxRefusal(req, WIRE)).toBeNull();
  });
});
