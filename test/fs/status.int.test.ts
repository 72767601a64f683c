import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mint, send } from '../capabilities/helpers.js';
import { ALL, auth, fsWorld, type FsWorld } from './world.js';

let w: FsWorld;
beforeAll(async () => { w = await fsWorld(); });
afterAll(async () => { await w.app.close(); });

describe('/fs method check (behaviour.md §9.6 step 1)', () => {
  it.each(['POST', 'PATCH', 'PROPFIND', 'TRACE'])('when the method is %s, then 405 before any token check, with Allow', async (m) => {
    const r = await w.req(m, '/fs/docs/a.txt');
    expect(r.status).toBe(405);
    expect(r.json).toEqual({ error: `Method not on the system plane: ${m}` });
    expect(r.headers.allow).toBe('PUT, GET, DELETE, HEAD');
  });

  it('when OPTIONS is sent, then the preflight answers 204', async () => {
    expect((await w.req('OPTIONS', '/fs/docs/a.txt')).status).toBe(204);
  });
});

describe('/fs token checks (spec §7 401; behaviour.md §9.6 steps 2–3)', () => {
  it('when no secret is presented, then 401 Capability required / missing', async () => {
    const r = await w.req('GET', '/fs/docs/a.txt');
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: 'Capability required', reason: 'missing' });
  });

  it('when Authorization is not a Bearer and there is no ?cap, then 401 missing', async () => {
    const r = await send(w.app.port, { path: '/fs/docs/a.txt', headers: { Authorization: `Basic ${w.all}` } });
    expect(r.json).toEqual({ error: 'Capability required', reason: 'missing' });
  });

  it('when the secret is unknown, then 401 unknown_token', async () => {
    const r = await w.req('GET', '/fs/docs/a.txt', 'caps_' + 'A'.repeat(43));
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: 'Capability refused: unknown_token', reason: 'unknown_token' });
  });

  it('when a secret differs from a live one in its last character, then it is unknown', async () => {
    const wrong = w.all.slice(0, -1) + (w.all.endsWith('A') ? 'B' : 'A');
    expect((await w.req('GET', '/fs/docs/a.txt', wrong)).json.reason).toBe('unknown_token');
  });

  it('when the secret comes as ?cap=, then it is accepted', async () => {
    const r = await w.req('GET', `/fs/docs/a.txt?cap=${w.all}`);
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('alpha');
  });

  it('when both are given, then Authorization wins over ?cap=', async () => {
    expect((await send(w.app.port, { path: `/fs/docs/a.txt?cap=bogus`, headers: auth(w.all) })).status).toBe(200);
    expect((await send(w.app.port, { path: `/fs/docs/a.txt?cap=${w.all}`, headers: auth('bogus') })).json.reason).toBe('unknown_token');
  });

  it('when the token has expired, then 401 expired', async () => {
    const c = await mint(w.app.base, { agent_id: 'fsa', verbs: ALL, ttl_ms: 500 });
    expect((await w.req('GET', '/fs/docs/a.txt', c.secret)).status).toBe(200);
    w.clock.increment(500);
    const r = await w.req('GET', '/fs/docs/a.txt', c.secret);
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: 'Capability refused: expired', reason: 'expired' });
  });

  it('when a single-use token was used, then 401 consumed', async () => {
    const c = await mint(w.app.base, { agent_id: 'fsa', verbs: ['GET'], ttl_ms: 60_000, single_use: true });
    expect((await w.req('GET', '/fs/docs/a.txt', c.secret)).status).toBe(200);
    const r = await w.req('GET', '/fs/docs/a.txt', c.secret);
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: 'Capability refused: consumed', reason: 'consumed' });
  });

  it('when a dead token asks for a non-data method, then it still gets 405 (method first)', async () => {
    expect((await w.req('PATCH', '/fs/x', 'caps_dead')).status).toBe(405);
  });
});

describe('/fs path, verb and scope checks (behaviour.md §9.6 steps 4–5)', () => {
  it('when the path can never be legal, then 400 Illegal path with the raw path', async () => {
    const r = await w.req('GET', '/fs/docs/%2e%2e/x', w.all);
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: 'Illegal path: docs/%2e%2e/x', reason: 'invalid_path' });
  });

  it('when the verb is not granted, then 403 Verb not granted: <VERB>', async () => {
    const c = await mint(w.app.base, { agent_id: 'fsa', verbs: ['GET'], ttl_ms: 60_000 });
    const r = await w.req('PUT', '/fs/docs/new.txt', c.secret, 'x');
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'Verb not granted: PUT', reason: 'verb_not_allowed' });
    expect((await w.req('DELETE', '/fs/docs/a.txt', c.secret)).json).toEqual({ error: 'Verb not granted: DELETE', reason: 'verb_not_allowed' });
    expect(existsSync(join(w.home, 'docs', 'new.txt'))).toBe(false);
  });

  it('when HEAD is sent without STAT, then 403 with status only', async () => {
    const c = await mint(w.app.base, { agent_id: 'fsa', verbs: ['GET'], ttl_ms: 60_000 });
    const r = await w.req('HEAD', '/fs/docs/a.txt', c.secret);
    expect(r.status).toBe(403);
    expect(r.body.length).toBe(0);
  });

  it('when the path is outside the prefix (sibling-prefix trick included), then 403 path_outside_scope', async () => {
    const c = await mint(w.app.base, { agent_id: 'fsa', verbs: ALL, ttl_ms: 60_000, path_prefix: 'data' });
    const r = await w.req('GET', '/fs/database/x', c.secret);
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'Path outside the capability scope: database/x', reason: 'path_outside_scope' });
    expect((await w.req('GET', '/fs/docs/a.txt', c.secret)).json.reason).toBe('path_outside_scope');
    expect((await w.req('GET', '/fs/', c.secret)).json).toEqual({ error: 'Path outside the capability scope: /', reason: 'path_outside_scope' });
    expect((await w.req('PUT', '/fs/data/in.txt', c.secret, 'in')).status).toBe(201);
  });
});

describe('/fs resolution (behaviour.md §9.6 step 6)', () => {
  it('when a symlink is on the path, then 403 Symlink refused and the outside is not read', async () => {
    const r = await w.req('GET', '/fs/out/secret.txt', w.all);
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'Symlink refused: out/secret.txt', reason: 'symlink' });
    expect(r.body.toString()).not.toContain('OUTSIDE');
  });

  it('when the final component is a symlink (even to a file inside), then 403 for every verb', async () => {
    expect((await w.req('GET', '/fs/docs/alias.txt', w.all)).json).toEqual({ error: 'Symlink refused: docs/alias.txt', reason: 'symlink' });
    expect((await w.req('PUT', '/fs/docs/alias.txt', w.all, 'x')).json.reason).toBe('symlink');
    expect((await w.req('DELETE', '/fs/docs/alias.txt', w.all)).json.reason).toBe('symlink');
    expect((await w.req('HEAD', '/fs/docs/alias.txt', w.all)).status).toBe(403);
    expect((await w.req('PUT', '/fs/out/new.txt', w.all, 'x')).json.reason).toBe('symlink');
    expect((await w.req('DELETE', '/fs/out/secret.txt', w.all)).json.reason).toBe('symlink');
    expect(readFileSync(join(w.home, 'docs', 'a.txt'), 'utf8')).toBe('alpha');
    expect(readdirSync(w.outside)).toEqual(['secret.txt']);
  });

  it('when a file blocks a parent segment, then 409 Not a directory', async () => {
    const r = await w.req('GET', '/fs/file.txt/x', w.all);
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: 'Not a directory: file.txt/x', reason: 'not_a_directory' });
    expect((await w.req('PUT', '/fs/file.txt/x/y', w.all, 'x')).json.reason).toBe('not_a_directory');
    expect((await w.req('DELETE', '/fs/file.txt/x', w.all)).json.reason).toBe('not_a_directory');
  });

  it('when the target is a directory (the root included), then 409 Is a directory', async () => {
    expect((await w.req('GET', '/fs/docs', w.all)).json).toEqual({ error: 'Is a directory: docs', reason: 'is_a_directory' });
    expect((await w.req('GET', '/fs/docs/', w.all)).json).toEqual({ error: 'Is a directory: docs', reason: 'is_a_directory' });
    expect((await w.req('GET', '/fs', w.all)).json).toEqual({ error: 'Is a directory: /', reason: 'is_a_directory' });
    expect((await w.req('GET', '/fs/', w.all)).status).toBe(409);
    expect((await w.req('PUT', '/fs/docs', w.all, 'x')).status).toBe(409);
    expect((await w.req('DELETE', '/fs/docs', w.all)).status).toBe(409);
    const head = await w.req('HEAD', '/fs/docs', w.all);
    expect(head.status).toBe(409);
    expect(head.body.length).toBe(0);
  });

  it('when the file is missing, then GET 404 Not found and HEAD 404 without a body', async () => {
    const r = await w.req('GET', '/fs/docs/none.txt', w.all);
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: 'Not found: docs/none.txt', reason: 'not_found' });
    expect((await w.req('GET', '/fs/nodir/none.txt', w.all)).status).toBe(404);
    const head = await w.req('HEAD', '/fs/docs/none.txt', w.all);
    expect(head.status).toBe(404);
    expect(head.body.length).toBe(0);
  });

  it('when a HEAD is refused for a dead token or an illegal path, then status only', async () => {
    for (const [path, secret, status] of [['/fs/docs/a.txt', '', 401], ['/fs/docs/a.txt', 'caps_x', 401], ['/fs/../x', w.all, 400]] as const) {
      const r = await w.req('HEAD', path, secret || undefined);
      expect(r.status).toBe(status);
      expect(r.body.length).toBe(0);
    }
  });
});
