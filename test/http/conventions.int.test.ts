import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => { t = await startApp({ env: { SVC_ALLOWED_ORIGINS: 'https://ok.example' } }); });
afterAll(async () => { await t.close(); });

const CORS = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'Content-Type, X-Agent-Id' };

describe('spec §4 conventions: CORS', () => {
  it.each([
    ['GET', '/health', 200],
    ['GET', '/nope', 404],
    ['PUT', '/health', 405],
    ['POST', '/exec', 400],
  ])('when %s %s answers %i, then the CORS headers are present', async (method, path, status) => {
    const r = await raw(t.port, { method, path });
    expect(r.status).toBe(status);
    expect(r.headers).toMatchObject(CORS);
  });

  it('when OPTIONS is sent to any path, then 204 with an empty body and the preflight headers', async () => {
    for (const path of ['/exec', '/nope/deeper', '/agents/x']) {
      const r = await raw(t.port, { method: 'OPTIONS', path, headers: { Origin: 'http://evil.example' } });
      expect(r.status).toBe(204);
      expect(r.body).toBe('');
      expect(r.headers).toMatchObject({ ...CORS, 'access-control-allow-methods': 'GET, POST, PUT, DELETE, HEAD, OPTIONS', 'access-control-max-age': '600' });
    }
  });
});

describe('behaviour.md §9.1 unknown paths and methods', () => {
  it('when the path is unknown, then 404 {"error":"Not found: <METHOD> <path>"}', async () => {
    const r = await call(t.base, 'DELETE', '/nope');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'Not found: DELETE /nope' });
  });

  it('when the method is not served on a known path, then 405 with Allow', async () => {
    const r = await call(t.base, 'PUT', '/agents');
    expect(r.status).toBe(405);
    expect(r.body).toEqual({ error: 'Method not allowed: PUT /agents' });
    expect(r.headers.get('allow')).toBe('GET, POST');
  });

  it('when a JSON body does not parse or is not an object, then 400 {"error":"Invalid JSON body"}', async () => {
    for (const body of ['{nope', '[1,2]', '"str"', 'null']) {
      const r = await call(t.base, 'POST', '/agents', { body });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'Invalid JSON body' });
    }
  });
});

describe('behaviour.md §9.1 body cap (10485760 bytes inclusive)', () => {
  it('when Content-Length exceeds the cap, then 413 at once with Connection: close', async () => {
    const r = await new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/agents', headers: { 'Content-Length': String(10485761), 'Content-Type': 'application/json' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.write('{"agent_id":');
      // The answer comes before the body is sent.
    });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ error: 'Request body exceeds 10485760 bytes' });
    expect(r.connection).toBe('close');
  });

  it('when a chunked body passes the cap, then 413 with the same body', async () => {
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/agents', headers: { 'Transfer-Encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', () => undefined);
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 12 && req.write(chunk)) sent++;
        if (sent < 12) req.once('drain', () => { sent++; pump(); });
        else req.end();
      };
      req.on('error', reject);
      pump();
    });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ error: 'Request body exceeds 10485760 bytes' });
  });

  it('when a body is exactly at the cap, then it is read (and judged on content)', async () => {
    const pad = ' '.repeat(10485760 - '{"agent_id":"capped"}'.length);
    const r = await call(t.base, 'POST', '/agents', { body: `{"agent_id":"capped"}${pad}` });
    expect(r.status).toBe(200);
    expect(r.body.agent_id).toBe('capped');
  });
});

describe('behaviour.md §9.2 Host and Origin checks', () => {
  it.each(['evil.example', 'evil.example:3923', '127.0.0.1.evil.example', 'localhost.:80', '127.0.0.2'])('when Host is %s, then 403 Forbidden host', async (host) => {
    const r = await raw(t.port, { path: '/health', headers: { Host: host } });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toEqual({ error: `Forbidden host: ${host}` });
    expect(r.headers['access-control-allow-origin']).toBe('*');
  });

  it.each(['127.0.0.1', '127.0.0.1:3923', 'localhost', 'localhost:1', '[::1]', '[::1]:3923'])('when Host is %s, then the request is served', async (host) => {
    const r = await raw(t.port, { path: '/health', headers: { Host: host } });
    expect(r.status).toBe(200);
  });

  it.each(['http://evil.example', 'null', 'http://127.0.0.1.evil.example', 'file://'])('when Origin is %s on POST /agents, then 403 Forbidden origin', async (origin) => {
    const r = await raw(t.port, { method: 'POST', path: '/agents', headers: { Origin: origin }, body: '{"agent_id":"x"}' });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toEqual({ error: `Forbidden origin: ${origin}` });
  });

  it.each(['http://127.0.0.1:5173', 'https://localhost', 'http://[::1]:8080', 'https://ok.example'])('when Origin is %s (loopback or allowed), then the request is served', async (origin) => {
    const r = await raw(t.port, { method: 'POST', path: '/agents', headers: { Origin: origin }, body: '{"agent_id":"orig"}' });
    expect(r.status).toBe(200);
  });

  it('when a foreign Origin reads GET /health or GET /describe, then it is served', async () => {
    for (const path of ['/health', '/describe']) {
      expect((await raw(t.port, { path, headers: { Origin: 'http://evil.example' } })).status).toBe(200);
    }
    expect((await raw(t.port, { method: 'POST', path: '/shutdown', headers: { Origin: 'http://evil.example' } })).status).toBe(403);
  });

  it('when a WebSocket upgrade comes with a foreign Host, then it is refused like any request', async () => {
    const r = await raw(t.port, { path: '/ws', headers: { Host: 'evil.example', Connection: 'Upgrade', Upgrade: 'websocket' } });
    expect(r.status).toBe(403);
  });
});

describe('spec §4.9 / behaviour.md §9.3 lifecycle', () => {
  it('GET /health is exactly {ok, agents, sessions}', async () => {
    const r = await call(t.base, 'GET', '/health');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['agents', 'ok', 'sessions']);
    expect(r.body.ok).toBe(true);
    expect(Number.isInteger(r.body.agents) && Number.isInteger(r.body.sessions)).toBe(true);
  });

  it('GET /describe advertises role, limits and the implemented capabilities', async () => {
    const r = await call(t.base, 'GET', '/describe');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'loom', version: '0.1.0', protocol: '0.1', wire: 'agent', instance: { role: 'agent-host', label: 'loom' } });
    expect(r.body.limits).toEqual({ 'fs.max_bytes': 10485760, request_body_bytes: 10485760, webhook_body_bytes: 65536, queue_max: 5, queue_wait_ms: 120000, field_file_bytes: 1048576 });
    expect(r.body.capabilities).toMatchObject({ describe: {}, agents: {}, sessions: {}, exec: {} });
  });

  it('POST /shutdown answers {ok:true, message} and then asks the process to stop', async () => {
    const before = t.shutdowns;
    const r = await call(t.base, 'POST', '/shutdown');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, message: 'loom shutting down' });
    await new Promise((res) => setTimeout(res, 20));
    expect(t.shutdowns).toBe(before + 1);
  });
});

describe('JSON answers (one writer for every route)', () => {
  it.each(['/health', '/', '/describe', '/agents'])('when GET %s answers, then its type names the charset and its length is the body\'s bytes', async (path) => {
    const r = await raw(t.port, { path });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.body));
    expect(() => JSON.parse(r.body) as unknown).not.toThrow();
  });

  it.each(['/'])('when HEAD %s is asked (a route that declares HEAD), then the headers of the GET come with no body', async (path) => {
    const get = await raw(t.port, { path });
    const head = await raw(t.port, { method: 'HEAD', path });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.body).toBe('');
  });
});
