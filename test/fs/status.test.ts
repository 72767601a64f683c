import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { addAgent, mint, send, type Answer } from '../capabilities/helpers.js';

const MAX = 10485760;
const ALL = ['PUT', 'GET', 'DELETE', 'STAT'];

let app: TestApp;
let clock: SimulatedClock;
let home: string;
let outside: string;
let all: string;

beforeAll(async () => {
  clock = new SimulatedClock();
  clock.set(Date.parse('2025-06-01T10:00:00.000Z'));
  app = await startApp({ clock });
  home = await addAgent(app.base, 'fsa');
  outside = tempDir('loom-outside-');
  writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE');
  mkdirSync(join(home, 'docs'));
  writeFileSync(join(home, 'docs', 'a.txt'), 'alpha');
  writeFileSync(join(home, 'file.txt'), 'plain');
  symlinkSync(outside, join(home, 'out'));
  symlinkSync(join(home, 'docs', 'a.txt'), join(home, 'docs', 'alias.txt'));
  all = (await mint(app.base, { agent_id: 'fsa', verbs: ALL, ttl_ms: 3_600_000 })).secret;
});
afterAll(async () => { await app.close(); });

const auth = (s: string) => ({ Authorization: `Bearer ${s}` });
const req = (method: string, path: string, secret?: string, body?: Buffer | string): Promise<Answer> =>
  send(app.port, { method, path, headers: secret ? auth(secret) : {}, body });

describe('/fs method check (behaviour.md §9.6 step 1)', () => {
  it.each(['POST', 'PATCH', 'PROPFIND', 'TRACE'])('when the method is %s, then 405 before any token check, with Allow', async (m) => {
    const r = await req(m, '/fs/docs/a.txt');
    expect(r.status).toBe(405);
    expect(r.json).toEqual({ error: `Method not on the system plane: ${m}` });
    expect(r.headers.allow).toBe('PUT, GET, DELETE, HEAD');
  });

  it('when OPTIONS is sent, then the preflight answers 204', async () => {
    expect((await req('OPTIONS', '/fs/docs/a.txt')).status).toBe(204);
  });
});

describe('/fs token checks (spec §7 401; behaviour.md §9.6 steps 2–3)', () => {
  it('when no secret is presented, then 401 Capability required / missing', async () => {
    const r = await req('GET', '/fs/docs/a.txt');
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: 'Capability required', reason: 'missing' });
  });

  it('when Authorization is not a Bearer and there is no ?cap, then 401 missing', async () => {
    const r = await send(app.port, { path: '/fs/docs/a.txt', headers: { Authorization: `Basic ${all}` } });
    expect(r.json).toEqual({ error: 'Capability required', reason: 'missing' });
  });

  it('when the secret is unknown, then 401 unknown_token', async () => {
    const r = await req('GET', '/fs/docs/a.txt', 'caps_' + 'A'.repeat(43));
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: 'Capability refused: unknown_token', reason: 'unknown_token' });
  });

  it('when a secret differs from a live one in its last character, then it is unknown', async () => {
    const wrong = all.slice(0, -1) + (all.endsWith('A') ? 'B' : 'A');
    expect((await req('GET', '/fs/docs/a.txt', wrong)).json.reason).toBe('unknown_token');
  });

  it('when the secret comes as ?cap=, then it is accepted', async () => {
    const r = await req('GET', `/fs/docs/a.txt?cap=${all}`);
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('alpha');
  });

  it('when both are given, then Authorization wins over ?cap=', async () => {
    expect((await send(app.port, { path: `/fs/docs/a.txt?cap=bogus`, headers: auth(all) })).status).toBe(200);
    expect((await send(app.port, { path: `/fs/docs/a.txt?cap=${all}`, headers: auth('bogus') })).json.reason).toBe('unknown_token');
  });

  it('when the token has expired, then 401 expired', async () => {
    const c = await mint(app.base, { agent_id: 'fsa', verbs: ALL, ttl_ms: 500 });
    expect((await req('GET', '/fs/docs/a.txt', c.secret)).status).toBe(200);
    clock.increment(500);
    const r = await req('GET', '/fs/docs/a.txt', c.secret);
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: 'Capability refused: expired', reason: 'expired' });
  });

  it('when a single-use token was used, then 401 consumed', async () => {
    const c = await mint(app.base, { agent_id: 'fsa', verbs: ['GET'], ttl_ms: 60_000, single_use: true });
    expect((await req('GET', '/fs/docs/a.txt', c.secret)).status).toBe(200);
    const r = await req('GET', '/fs/docs/a.txt', c.secret);
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: 'Capability refused: consumed', reason: 'consumed' });
  });

  it('when a dead token asks for a non-data method, then it still gets 405 (method first)', async () => {
    expect((await req('PATCH', '/fs/x', 'caps_dead')).status).toBe(405);
  });
});

describe('/fs path, verb and scope checks (behaviour.md §9.6 steps 4–5)', () => {
  it('when the path can never be legal, then 400 Illegal path with the raw path', async () => {
    const r = await req('GET', '/fs/docs/%2e%2e/x', all);
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: 'Illegal path: docs/%2e%2e/x', reason: 'invalid_path' });
  });

  it('when the verb is not granted, then 403 Verb not granted: <VERB>', async () => {
    const c = await mint(app.base, { agent_id: 'fsa', verbs: ['GET'], ttl_ms: 60_000 });
    const r = await req('PUT', '/fs/docs/new.txt', c.secret, 'x');
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'Verb not granted: PUT', reason: 'verb_not_allowed' });
    expect((await req('DELETE', '/fs/docs/a.txt', c.secret)).json).toEqual({ error: 'Verb not granted: DELETE', reason: 'verb_not_allowed' });
    expect(existsSync(join(home, 'docs', 'new.txt'))).toBe(false);
  });

  it('when HEAD is sent without STAT, then 403 with status only', async () => {
    const c = await mint(app.base, { agent_id: 'fsa', verbs: ['GET'], ttl_ms: 60_000 });
    const r = await req('HEAD', '/fs/docs/a.txt', c.secret);
    expect(r.status).toBe(403);
    expect(r.body.length).toBe(0);
  });

  it('when the path is outside the prefix (sibling-prefix trick included), then 403 path_outside_scope', async () => {
    const c = await mint(app.base, { agent_id: 'fsa', verbs: ALL, ttl_ms: 60_000, path_prefix: 'data' });
    const r = await req('GET', '/fs/database/x', c.secret);
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'Path outside the capability scope: database/x', reason: 'path_outside_scope' });
    expect((await req('GET', '/fs/docs/a.txt', c.secret)).json.reason).toBe('path_outside_scope');
    expect((await req('GET', '/fs/', c.secret)).json).toEqual({ error: 'Path outside the capability scope: /', reason: 'path_outside_scope' });
    expect((await req('PUT', '/fs/data/in.txt', c.secret, 'in')).status).toBe(201);
  });
});

describe('/fs resolution (behaviour.md §9.6 step 6)', () => {
  it('when a symlink is on the path, then 403 Symlink refused and the outside is not read', async () => {
    const r = await req('GET', '/fs/out/secret.txt', all);
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'Symlink refused: out/secret.txt', reason: 'symlink' });
    expect(r.body.toString()).not.toContain('OUTSIDE');
  });

  it('when the final component is a symlink (even to a file inside), then 403 for every verb', async () => {
    expect((await req('GET', '/fs/docs/alias.txt', all)).json).toEqual({ error: 'Symlink refused: docs/alias.txt', reason: 'symlink' });
    expect((await req('PUT', '/fs/docs/alias.txt', all, 'x')).json.reason).toBe('symlink');
    expect((await req('DELETE', '/fs/docs/alias.txt', all)).json.reason).toBe('symlink');
    expect((await req('HEAD', '/fs/docs/alias.txt', all)).status).toBe(403);
    expect((await req('PUT', '/fs/out/new.txt', all, 'x')).json.reason).toBe('symlink');
    expect((await req('DELETE', '/fs/out/secret.txt', all)).json.reason).toBe('symlink');
    expect(readFileSync(join(home, 'docs', 'a.txt'), 'utf8')).toBe('alpha');
    expect(readdirSync(outside)).toEqual(['secret.txt']);
  });

  it('when a file blocks a parent segment, then 409 Not a directory', async () => {
    const r = await req('GET', '/fs/file.txt/x', all);
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: 'Not a directory: file.txt/x', reason: 'not_a_directory' });
    expect((await req('PUT', '/fs/file.txt/x/y', all, 'x')).json.reason).toBe('not_a_directory');
    expect((await req('DELETE', '/fs/file.txt/x', all)).json.reason).toBe('not_a_directory');
  });

  it('when the target is a directory (the root included), then 409 Is a directory', async () => {
    expect((await req('GET', '/fs/docs', all)).json).toEqual({ error: 'Is a directory: docs', reason: 'is_a_directory' });
    expect((await req('GET', '/fs/docs/', all)).json).toEqual({ error: 'Is a directory: docs', reason: 'is_a_directory' });
    expect((await req('GET', '/fs', all)).json).toEqual({ error: 'Is a directory: /', reason: 'is_a_directory' });
    expect((await req('GET', '/fs/', all)).status).toBe(409);
    expect((await req('PUT', '/fs/docs', all, 'x')).status).toBe(409);
    expect((await req('DELETE', '/fs/docs', all)).status).toBe(409);
    const head = await req('HEAD', '/fs/docs', all);
    expect(head.status).toBe(409);
    expect(head.body.length).toBe(0);
  });

  it('when the file is missing, then GET 404 Not found and HEAD 404 without a body', async () => {
    const r = await req('GET', '/fs/docs/none.txt', all);
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: 'Not found: docs/none.txt', reason: 'not_found' });
    expect((await req('GET', '/fs/nodir/none.txt', all)).status).toBe(404);
    const head = await req('HEAD', '/fs/docs/none.txt', all);
    expect(head.status).toBe(404);
    expect(head.body.length).toBe(0);
  });

  it('when a HEAD is refused for a dead token or an illegal path, then status only', async () => {
    for (const [path, secret, status] of [['/fs/docs/a.txt', '', 401], ['/fs/docs/a.txt', 'caps_x', 401], ['/fs/../x', all, 400]] as const) {
      const r = await req('HEAD', path, secret || undefined);
      expect(r.status).toBe(status);
      expect(r.body.length).toBe(0);
    }
  });
});

describe('/fs operations (spec §4.1; behaviour.md §9.6 step 7)', () => {
  it('when PUT creates a file, then 201 with {ok, path, size, created: true} and parents are created', async () => {
    const r = await req('PUT', '/fs/new/deep/er/f.bin', all, Buffer.from([0, 1, 2, 255]));
    expect(r.status).toBe(201);
    expect(r.json).toEqual({ ok: true, path: 'new/deep/er/f.bin', size: 4, created: true });
    expect(readFileSync(join(home, 'new/deep/er/f.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it('when PUT overwrites a file, then 200 with created false and no temp file is left', async () => {
    const r = await req('PUT', '/fs/new/deep/er/f.bin', all, 'second');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, path: 'new/deep/er/f.bin', size: 6, created: false });
    expect(readdirSync(join(home, 'new/deep/er'))).toEqual(['f.bin']);
  });

  it('when PUT has an empty body, then an empty file is created', async () => {
    const r = await req('PUT', '/fs/empty.txt', all, '');
    expect(r.json).toEqual({ ok: true, path: 'empty.txt', size: 0, created: true });
    const g = await req('GET', '/fs/empty.txt', all);
    expect(g.status).toBe(200);
    expect(g.headers['content-length']).toBe('0');
  });

  it('when GET reads a file, then 200 raw octet-stream bytes with Content-Length and Last-Modified', async () => {
    const r = await req('GET', '/fs/docs/a.txt', all);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/octet-stream');
    expect(r.headers['content-length']).toBe('5');
    expect(r.headers['last-modified']).toBe(statSync(join(home, 'docs/a.txt')).mtime.toUTCString());
    expect(r.body.toString()).toBe('alpha');
  });

  it('when GET reads a large file, then it is streamed whole', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 7, 7);
    writeFileSync(join(home, 'big.bin'), big);
    const r = await req('GET', '/fs/big.bin', all);
    expect(r.headers['content-length']).toBe(String(big.length));
    expect(r.body.equals(big)).toBe(true);
  });

  it('when HEAD (STAT) finds a file, then 200 with size and Last-Modified and no body', async () => {
    const r = await req('HEAD', '/fs/docs/a.txt', all);
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBe('5');
    expect(r.headers['last-modified']).toBe(statSync(join(home, 'docs/a.txt')).mtime.toUTCString());
    expect(r.body.length).toBe(0);
  });

  it('when DELETE removes a file, then 200 {ok, path, existed: true}; again existed false (idempotent)', async () => {
    writeFileSync(join(home, 'docs', 'gone.txt'), 'x');
    const r = await req('DELETE', '/fs/docs/gone.txt', all);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, path: 'docs/gone.txt', existed: true });
    expect(existsSync(join(home, 'docs', 'gone.txt'))).toBe(false);
    expect((await req('DELETE', '/fs/docs/gone.txt', all)).json).toEqual({ ok: true, path: 'docs/gone.txt', existed: false });
    expect((await req('DELETE', '/fs/no/such/dir/x', all)).json).toEqual({ ok: true, path: 'no/such/dir/x', existed: false });
  });

  it('when X-Agent-Id names another agent, then it is ignored (the capability is the identity)', async () => {
    const r = await send(app.port, { path: '/fs/docs/a.txt', headers: { ...auth(all), 'X-Agent-Id': 'someone-else' } });
    expect(r.status).toBe(200);
  });
});

describe('/fs body cap (spec §8 fs.max_bytes; behaviour.md §9.6 PUT 413)', () => {
  it('when PUT declares a Content-Length over fs.max_bytes, then 413 at once and nothing is written', async () => {
    const r = await new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
      const q = request({ host: '127.0.0.1', port: app.port, method: 'PUT', path: '/fs/too/big.bin', headers: { ...auth(all), 'Content-Length': String(MAX + 1) } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
      });
      q.on('error', reject);
      q.write(Buffer.alloc(1024)); // a little of the body; the answer must not wait for the rest
    });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ error: 'Body exceeds fs.max_bytes (10485760)', reason: 'too_large' });
    expect(r.connection).toBe('close');
    expect(existsSync(join(home, 'too'))).toBe(false);
  });

  it('when a chunked PUT passes fs.max_bytes, then 413 and neither the target nor a temp file remains', async () => {
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const q = request({ host: '127.0.0.1', port: app.port, method: 'PUT', path: '/fs/chunked/big.bin', headers: { ...auth(all), 'Transfer-Encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      q.on('error', reject);
      const chunk = Buffer.alloc(1024 * 1024, 1);
      let sent = 0;
      const pumpMore = () => {
        while (sent < 12) {
          sent++;
          if (!q.write(chunk)) return void q.once('drain', pumpMore);
        }
        q.end();
      };
      pumpMore();
    });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ error: 'Body exceeds fs.max_bytes (10485760)', reason: 'too_large' });
    expect(readdirSync(join(home, 'chunked'))).toEqual([]);
  });

  it('when PUT sends exactly fs.max_bytes, then it is accepted (inclusive)', async () => {
    const r = await req('PUT', '/fs/exact.bin', all, Buffer.alloc(MAX, 2));
    expect(r.status).toBe(201);
    expect(r.json).toEqual({ ok: true, path: 'exact.bin', size: MAX, created: true });
  });
});

describe('/fs single-use tokens (behaviour.md §9.5)', () => {
  it('when a presigned GET hits 404, then the token is not burnt; the first 200 consumes it', async () => {
    const c = await mint(app.base, { agent_id: 'fsa', verbs: ['GET'], ttl_ms: 60_000, single_use: true });
    expect((await req('GET', '/fs/later.txt', c.secret)).status).toBe(404);
    expect((await req('GET', '/fs/../x', c.secret)).status).toBe(400);
    expect((await req('PUT', '/fs/later.txt', c.secret, 'x')).status).toBe(403);
    writeFileSync(join(home, 'later.txt'), 'now');
    expect((await req('GET', '/fs/later.txt', c.secret)).body.toString()).toBe('now');
    expect((await req('GET', '/fs/later.txt', c.secret)).json.reason).toBe('consumed');
    const listed = (await (await fetch(`${app.base}/capabilities?agent_id=fsa`)).json()) as { capabilities: Array<{ token_id: string; state: string; used_at: string | null }> };
    const rec = listed.capabilities.find((x) => x.token_id === c.token_id);
    expect(rec?.state).toBe('consumed');
    expect(rec?.used_at).toBe(new Date(clock.now()).toISOString());
  });

  it('when a single-use PUT succeeds, then the next PUT is refused and the file keeps the first body', async () => {
    const c = await mint(app.base, { agent_id: 'fsa', verbs: ['PUT'], ttl_ms: 60_000, single_use: true });
    expect((await req('PUT', '/fs/once.txt', c.secret, 'first')).status).toBe(201);
    expect((await req('PUT', '/fs/once.txt', c.secret, 'second')).status).toBe(401);
    expect(readFileSync(join(home, 'once.txt'), 'utf8')).toBe('first');
  });
});

describe('/fs atomic writes (spec §4.1: a reader never sees half a file)', () => {
  it('when a large file is overwritten while readers read it, then every read is one whole version', async () => {
    const size = 4 * 1024 * 1024;
    const A = Buffer.alloc(size, 0x61);
    const B = Buffer.alloc(size, 0x62);
    writeFileSync(join(home, 'swap.bin'), A);
    const reads: Array<Promise<Answer>> = [];
    const writes: Array<Promise<Answer>> = [];
    for (let i = 0; i < 6; i++) {
      writes.push(req('PUT', '/fs/swap.bin', all, i % 2 ? A : B));
      reads.push(req('GET', '/fs/swap.bin', all), req('GET', '/fs/swap.bin', all));
    }
    for (const w of await Promise.all(writes)) expect(w.status).toBe(200);
    for (const r of await Promise.all(reads)) {
      expect(r.status).toBe(200);
      expect(r.body.length).toBe(size);
      expect(r.body.equals(A) || r.body.equals(B)).toBe(true);
    }
    expect(readdirSync(home).filter((n) => n.startsWith('.loom-put-'))).toEqual([]);
  });
});

describe('/fs keeps the app-wide rules (spec §4 CORS; behaviour.md §9.1, §9.2)', () => {
  it('when an /fs answer is sent, then it carries exactly the CORS headers of spec §4 (success and refusal)', async () => {
    for (const r of [await req('GET', '/fs/docs/a.txt', all), await req('GET', '/fs/docs/a.txt'), await req('PATCH', '/fs/x')]) {
      expect(r.headers['access-control-allow-origin']).toBe('*');
      expect(r.headers['access-control-allow-headers']).toBe('Content-Type, X-Agent-Id');
    }
  });

  it('when the Host is not loopback, then 403 Forbidden host before any /fs check', async () => {
    const r = await send(app.port, { path: '/fs/docs/a.txt', headers: { ...auth(all), Host: 'evil.example' } });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'Forbidden host: evil.example' });
  });

  it('when the Origin is foreign, then 403 Forbidden origin; a loopback Origin is served', async () => {
    const r = await send(app.port, { path: '/fs/docs/a.txt', headers: { ...auth(all), Origin: 'http://evil.example' } });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'Forbidden origin: http://evil.example' });
    const ok = await send(app.port, { path: '/fs/docs/a.txt', headers: { ...auth(all), Origin: 'http://localhost:5173' } });
    expect(ok.status).toBe(200);
  });

  it('when a path only starts like /fs, then it is not the file plane (404 Not found)', async () => {
    const r = await req('GET', '/fsx/a', all);
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: 'Not found: GET /fsx/a' });
  });
});
