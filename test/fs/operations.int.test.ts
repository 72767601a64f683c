import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { mint, send, type Answer } from '../capabilities/helpers.js';
import { auth, fsWorld, MAX, type FsWorld } from './world.js';

let w: FsWorld;
beforeAll(async () => { w = await fsWorld(); });
afterAll(async () => { await w.app.close(); });

describe('/fs operations (spec §4.1; behaviour.md §9.6 step 7)', () => {
  it('when PUT creates a file, then 201 with {ok, path, size, created: true} and parents are created', async () => {
    const r = await w.req('PUT', '/fs/new/deep/er/f.bin', w.all, Buffer.from([0, 1, 2, 255]));
    expect(r.status).toBe(201);
    expect(r.json).toEqual({ ok: true, path: 'new/deep/er/f.bin', size: 4, created: true });
    expect(readFileSync(join(w.home, 'new/deep/er/f.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it('when PUT overwrites a file, then 200 with created false and no temp file is left', async () => {
    const r = await w.req('PUT', '/fs/new/deep/er/f.bin', w.all, 'second');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, path: 'new/deep/er/f.bin', size: 6, created: false });
    expect(readdirSync(join(w.home, 'new/deep/er'))).toEqual(['f.bin']);
  });

  it('when PUT has an empty body, then an empty file is created', async () => {
    const r = await w.req('PUT', '/fs/empty.txt', w.all, '');
    expect(r.json).toEqual({ ok: true, path: 'empty.txt', size: 0, created: true });
    const g = await w.req('GET', '/fs/empty.txt', w.all);
    expect(g.status).toBe(200);
    expect(g.headers['content-length']).toBe('0');
  });

  it('when GET reads a file, then 200 raw octet-stream bytes with Content-Length and Last-Modified', async () => {
    const r = await w.req('GET', '/fs/docs/a.txt', w.all);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/octet-stream');
    expect(r.headers['content-length']).toBe('5');
    expect(r.headers['last-modified']).toBe(statSync(join(w.home, 'docs/a.txt')).mtime.toUTCString());
    expect(r.body.toString()).toBe('alpha');
  });

  it('when GET reads a large file, then it is streamed whole', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 7, 7);
    writeFileSync(join(w.home, 'big.bin'), big);
    const r = await w.req('GET', '/fs/big.bin', w.all);
    expect(r.headers['content-length']).toBe(String(big.length));
    expect(r.body.equals(big)).toBe(true);
  });

  it('when HEAD (STAT) finds a file, then 200 with size and Last-Modified and no body', async () => {
    const r = await w.req('HEAD', '/fs/docs/a.txt', w.all);
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBe('5');
    expect(r.headers['last-modified']).toBe(statSync(join(w.home, 'docs/a.txt')).mtime.toUTCString());
    expect(r.body.length).toBe(0);
  });

  it('when DELETE removes a file, then 200 {ok, path, existed: true}; again existed false (idempotent)', async () => {
    writeFileSync(join(w.home, 'docs', 'gone.txt'), 'x');
    const r = await w.req('DELETE', '/fs/docs/gone.txt', w.all);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, path: 'docs/gone.txt', existed: true });
    expect(existsSync(join(w.home, 'docs', 'gone.txt'))).toBe(false);
    expect((await w.req('DELETE', '/fs/docs/gone.txt', w.all)).json).toEqual({ ok: true, path: 'docs/gone.txt', existed: false });
    expect((await w.req('DELETE', '/fs/no/such/dir/x', w.all)).json).toEqual({ ok: true, path: 'no/such/dir/x', existed: false });
  });

  it('when X-Agent-Id names another agent, then it is ignored (the capability is the identity)', async () => {
    const r = await send(w.app.port, { path: '/fs/docs/a.txt', headers: { ...auth(w.all), 'X-Agent-Id': 'someone-else' } });
    expect(r.status).toBe(200);
  });
});

describe('/fs body cap (spec §8 fs.max_bytes; behaviour.md §9.6 PUT 413)', () => {
  it('when PUT declares a Content-Length over fs.max_bytes, then 413 at once and nothing is written', async () => {
    const r = await new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
      const q = request({ host: '127.0.0.1', port: w.app.port, method: 'PUT', path: '/fs/too/big.bin', headers: { ...auth(w.all), 'Content-Length': String(MAX + 1) } }, (res) => {
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
    expect(existsSync(join(w.home, 'too'))).toBe(false);
  });

  it('when a chunked PUT passes fs.max_bytes, then 413 and neither the target nor a temp file remains', async () => {
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const q = request({ host: '127.0.0.1', port: w.app.port, method: 'PUT', path: '/fs/chunked/big.bin', headers: { ...auth(w.all), 'Transfer-Encoding': 'chunked' } }, (res) => {
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
    expect(readdirSync(join(w.home, 'chunked'))).toEqual([]);
  });

  it('when PUT sends exactly fs.max_bytes, then it is accepted (inclusive)', async () => {
    const r = await w.req('PUT', '/fs/exact.bin', w.all, Buffer.alloc(MAX, 2));
    expect(r.status).toBe(201);
    expect(r.json).toEqual({ ok: true, path: 'exact.bin', size: MAX, created: true });
  });
});

describe('/fs single-use tokens (behaviour.md §9.5)', () => {
  it('when a presigned GET hits 404, then the token is not burnt; the first 200 consumes it', async () => {
    const c = await mint(w.app.base, { agent_id: 'fsa', verbs: ['GET'], ttl_ms: 60_000, single_use: true });
    expect((await w.req('GET', '/fs/later.txt', c.secret)).status).toBe(404);
    expect((await w.req('GET', '/fs/../x', c.secret)).status).toBe(400);
    expect((await w.req('PUT', '/fs/later.txt', c.secret, 'x')).status).toBe(403);
    writeFileSync(join(w.home, 'later.txt'), 'now');
    expect((await w.req('GET', '/fs/later.txt', c.secret)).body.toString()).toBe('now');
    expect((await w.req('GET', '/fs/later.txt', c.secret)).json.reason).toBe('consumed');
    const listed = (await (await fetch(`${w.app.base}/capabilities?agent_id=fsa`)).json()) as { capabilities: Array<{ token_id: string; state: string; used_at: string | null }> };
    const rec = listed.capabilities.find((x) => x.token_id === c.token_id);
    expect(rec?.state).toBe('consumed');
    expect(rec?.used_at).toBe(new Date(w.clock.now()).toISOString());
  });

  it('when a single-use PUT succeeds, then the next PUT is refused and the file keeps the first body', async () => {
    const c = await mint(w.app.base, { agent_id: 'fsa', verbs: ['PUT'], ttl_ms: 60_000, single_use: true });
    expect((await w.req('PUT', '/fs/once.txt', c.secret, 'first')).status).toBe(201);
    expect((await w.req('PUT', '/fs/once.txt', c.secret, 'second')).status).toBe(401);
    expect(readFileSync(join(w.home, 'once.txt'), 'utf8')).toBe('first');
  });
});

describe('/fs atomic writes (spec §4.1: a reader never sees half a file)', () => {
  it('when a large file is overwritten while readers read it, then every read is one whole version', async () => {
    const size = 4 * 1024 * 1024;
    const A = Buffer.alloc(size, 0x61);
    const B = Buffer.alloc(size, 0x62);
    writeFileSync(join(w.home, 'swap.bin'), A);
    const reads: Array<Promise<Answer>> = [];
    const writes: Array<Promise<Answer>> = [];
    for (let i = 0; i < 6; i++) {
      writes.push(w.req('PUT', '/fs/swap.bin', w.all, i % 2 ? A : B));
      reads.push(w.req('GET', '/fs/swap.bin', w.all), w.req('GET', '/fs/swap.bin', w.all));
    }
    for (const w of await Promise.all(writes)) expect(w.status).toBe(200);
    for (const r of await Promise.all(reads)) {
      expect(r.status).toBe(200);
      expect(r.body.length).toBe(size);
      expect(r.body.equals(A) || r.body.equals(B)).toBe(true);
    }
    expect(readdirSync(w.home).filter((n) => n.startsWith('.loom-put-'))).toEqual([]);
  });
});

describe('/fs keeps the app-wide rules (spec §4 CORS; behaviour.md §9.1, §9.2)', () => {
  it('when an /fs answer is sent, then it carries exactly the CORS headers of spec §4 (success and refusal)', async () => {
    for (const r of [await w.req('GET', '/fs/docs/a.txt', w.all), await w.req('GET', '/fs/docs/a.txt'), await w.req('PATCH', '/fs/x')]) {
      expect(r.headers['access-control-allow-origin']).toBe('*');
      expect(r.headers['access-control-allow-headers']).toBe('Content-Type, X-Agent-Id');
    }
  });

  it('when the Host is not loopback, then 403 Forbidden host before any /fs check', async () => {
    const r = await send(w.app.port, { path: '/fs/docs/a.txt', headers: { ...auth(w.all), Host: 'evil.example' } });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'Forbidden host: evil.example' });
  });

  it('when the Origin is foreign, then 403 Forbidden origin; a loopback Origin is served', async () => {
    const r = await send(w.app.port, { path: '/fs/docs/a.txt', headers: { ...auth(w.all), Origin: 'http://evil.example' } });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'Forbidden origin: http://evil.example' });
    const ok = await send(w.app.port, { path: '/fs/docs/a.txt', headers: { ...auth(w.all), Origin: 'http://localhost:5173' } });
    expect(ok.status).toBe(200);
  });

  it('when a path only starts like /fs, then it is not the file plane (404 Not found)', async () => {
    const r = await w.req('GET', '/fsx/a', w.all);
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: 'Not found: GET /fsx/a' });
  });
});
