import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { agentWithWebhook, postWebhook } from './helpers.js';

const URL_RE = /^http:\/\/127\.0\.0\.1:\d+\/webhook\/wh_[A-Za-z0-9_-]{43}$/;

let app: TestApp;
beforeAll(async () => { app = await startApp(); });
afterAll(async () => { await app.close(); });

describe('GET/POST /agents/{id}/webhook (spec §4.3, §3 Webhook token)', () => {
  it('when the agent has no token, then GET creates one and later GETs return it unchanged', async () => {
    await call(app.base, 'POST', '/agents', { body: { agent_id: 'w1' } });
    const a = await call(app.base, 'GET', '/agents/w1/webhook');
    expect(a.status).toBe(200);
    expect(Object.keys(a.body).sort()).toEqual(['agent_id', 'webhook_url']);
    expect(a.body.agent_id).toBe('w1');
    expect(a.body.webhook_url).toMatch(URL_RE);
    expect(a.body.webhook_url.startsWith(`http://127.0.0.1:${app.port}/webhook/`)).toBe(true);
    const b = await call(app.base, 'GET', '/agents/w1/webhook');
    expect(b.body).toEqual(a.body);
  });

  it('when the token is rotated, then the answer has a new URL and the old URL answers 401 at once', async () => {
    const { url, path } = await agentWithWebhook(app.base, 'w2');
    const r = await call(app.base, 'POST', '/agents/w2/webhook');
    expect(r.status).toBe(200);
    expect(r.body.agent_id).toBe('w2');
    expect(r.body.webhook_url).toMatch(URL_RE);
    expect(r.body.webhook_url).not.toBe(url);
    const old = await postWebhook(app.base, path, 'hello');
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ error: 'Unknown webhook token' });
    const fresh = await postWebhook(app.base, new URL(r.body.webhook_url).pathname, 'hello');
    expect(fresh.status).toBe(202);
    expect((await call(app.base, 'GET', '/agents/w2/webhook')).body.webhook_url).toBe(r.body.webhook_url);
  });

  it('when the token is rotated while a request body is still arriving, then that request gets 401', async () => {
    const { path } = await agentWithWebhook(app.base, 'midway');
    const { request } = await import('node:http');
    const result = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: app.port, method: 'POST', path, headers: { 'Content-Length': '10' } }, (res) => {
        let b = '';
        res.on('data', (c) => { b += c; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
      });
      req.on('error', reject);
      req.write('hello');
      void call(app.base, 'POST', '/agents/midway/webhook').then(() => req.end('world'), reject);
    });
    const r = await result;
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body)).toEqual({ error: 'Unknown webhook token' });
  });

  it.each(['GET', 'POST'])('when %s names an unknown agent, then 404 Unknown agent: <id>', async (method) => {
    const r = await call(app.base, method, '/agents/ghost/webhook');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'Unknown agent: ghost' });
  });

  it('when POST /agents asks for webhook: true, then webhook_url is returned and equals GET; without it there is none', async () => {
    const plain = await call(app.base, 'POST', '/agents', { body: { agent_id: 'w3' } });
    expect(plain.body.webhook_url).toBeUndefined();
    const r = await call(app.base, 'POST', '/agents', { body: { agent_id: 'w3', webhook: true } });
    expect(r.body).toMatchObject({ agent_id: 'w3', created: false });
    expect(r.body.webhook_url).toMatch(URL_RE);
    expect((await call(app.base, 'GET', '/agents/w3/webhook')).body.webhook_url).toBe(r.body.webhook_url);
    const again = await call(app.base, 'POST', '/agents', { body: { agent_id: 'w3', webhook: true } });
    expect(again.body.webhook_url).toBe(r.body.webhook_url);
  });

  it('when agents are listed, then no token appears', async () => {
    await agentWithWebhook(app.base, 'w4');
    const r = await call(app.base, 'GET', '/agents');
    expect(JSON.stringify(r.body)).not.toMatch(/wh_/);
  });

  it('when /describe is read, then the event capabilities are advertised', async () => {
    const r = await call(app.base, 'GET', '/describe');
    expect(r.body.capabilities).toMatchObject({ 'agent-webhooks': {}, events: {}, 'event-stream': { ping_ms: 15000 } });
    expect(r.body.limits.webhook_body_bytes).toBe(65536);
  });
});

describe('POST /webhook/<token> (spec §4.4, §7; behaviour.md §9.7)', () => {
  let path: string;
  beforeAll(async () => { ({ path } = await agentWithWebhook(app.base, 'hook')); });
  const read = async (id: string) => (await app.client('hook').exec('main', `/events.read ${id}`)).body ?? '';

  it('when a text is posted, then 202 {ok, agent_id, event_id} and the event is pending with source local-webhook', async () => {
    const r = await postWebhook(app.base, path, 'Build failed on main');
    expect(r.status).toBe(202);
    expect(Object.keys(r.body).sort()).toEqual(['agent_id', 'event_id', 'ok']);
    expect(r.body.ok).toBe(true);
    expect(r.body.agent_id).toBe('hook');
    expect(r.body.event_id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    const body = await read(r.body.event_id);
    expect(body).toContain('source: local-webhook');
    expect(body).toContain('status: pending');
  });

  it.each([
    ['unknown', 'wh_' + 'A'.repeat(43)],
    ['malformed', 'nope'],
    ['prefix only', 'wh_'],
    ['one character too long', 'wh_' + 'B'.repeat(44)],
  ])('when the token is %s, then 401 Unknown webhook token', async (_what, t) => {
    const r = await postWebhook(app.base, `/webhook/${t}`, 'hi');
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'Unknown webhook token' });
  });

  it('when the token is unknown and the body is too large, then the token check wins: 401', async () => {
    const r = await postWebhook(app.base, `/webhook/wh_${'C'.repeat(43)}`, 'x'.repeat(70000));
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'Unknown webhook token' });
  });

  it('when the body is exactly 65536 bytes, then it is accepted', async () => {
    const text = 'é'.repeat(32767) + 'xy';
    expect(Buffer.byteLength(text)).toBe(65536);
    const r = await postWebhook(app.base, path, text);
    expect(r.status).toBe(202);
  });

  it('when the body is 65537 bytes, then 413 Webhook body exceeds 65536 bytes', async () => {
    const r = await postWebhook(app.base, path, 'x'.repeat(65537));
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ error: 'Webhook body exceeds 65536 bytes' });
  });

  it('when a chunked body passes 65536 bytes, then 413 as well', async () => {
    const chunks = [Buffer.alloc(40000, 'a'), Buffer.alloc(40000, 'b')];
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request({ host: '127.0.0.1', port: app.port, method: 'POST', path, headers: { 'Transfer-Encoding': 'chunked' } }, (res) => {
          let b = '';
          res.on('data', (c) => { b += c; });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
        });
        req.on('error', reject);
        for (const c of chunks) req.write(c);
        req.end();
      }, reject);
    });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ error: 'Webhook body exceeds 65536 bytes' });
  });

  it.each([
    ['empty', Buffer.alloc(0)],
    ['whitespace only', Buffer.from(' \n\t\r\n ')],
    ['not valid UTF-8', Buffer.from([0x68, 0x69, 0xff, 0xfe])],
    ['a truncated UTF-8 sequence', Buffer.from([0x61, 0xe2, 0x82])],
  ])('when the body is %s, then 400 Webhook body must be non-empty text', async (_what, body) => {
    const r = await postWebhook(app.base, path, body);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Webhook body must be non-empty text' });
  });

  it('when the Content-Type is JSON or missing, then it is ignored and the text stored as given', async () => {
    const json = await postWebhook(app.base, path, '{"a":1}', { 'Content-Type': 'application/json' });
    expect(json.status).toBe(202);
    const none = await raw(app.port, { method: 'POST', path, body: 'no type' });
    expect(none.status).toBe(202);
    expect(await read(json.body.event_id)).toContain('\n{"a":1}\n');
  });

  it('when texts look like shell or commands, then they are stored verbatim and nothing runs', async () => {
    const dir = tempDir();
    const marker = join(dir, 'pwned');
    const victim = join(dir, 'victim');
    await import('node:fs').then((fs) => fs.writeFileSync(victim, 'still here'));
    const texts = [
      `$(touch ${marker})`,
      `\`touch ${marker}\``,
      '/exec rm -rf ~',
      `/exec rm -rf ${victim}`,
      `/exec touch ${marker}`,
      `; touch ${marker} #`,
      '/events.clear --all',
    ];
    const ids: string[] = [];
    for (const t of texts) {
      const r = await postWebhook(app.base, path, t);
      expect(r.status).toBe(202);
      ids.push(r.body.event_id);
    }
    for (let i = 0; i < texts.length; i++) {
      const body = await read(ids[i]);
      expect(body.split('\n')[6]).toBe(texts[i]);
    }
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(victim, 'utf8')).toBe('still here');
    // '/events.clear --all' was not run either: every event is still there.
    for (const id of ids) expect(await read(id)).toContain(`Event ${id}`);
  });

  it('when a text has a BOM, CR LF, tabs, trailing spaces and astral characters, then the log holds it byte for byte', async () => {
    const text = '\uFEFF  first line  \r\n\ttabbed\u2028sep 😀 \n\n';
    const r = await postWebhook(app.base, path, text);
    expect(r.status).toBe(202);
    const log = readFileSync(join(app.dataDir, 'agents', 'hook', 'state', 'events.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const stored = log.find((l) => l.event?.id === r.body.event_id);
    expect(Buffer.from(stored.event.text, 'utf8').equals(Buffer.from(text, 'utf8'))).toBe(true);
  });

  it('when GET /webhook/<token> is tried, then 405 with Allow: POST', async () => {
    const r = await call(app.base, 'GET', path);
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
  });

  it('when the inbox log is written, then it sits outside the home with mode 0600', () => {
    const p = join(app.dataDir, 'agents', 'hook', 'state', 'events.jsonl');
    expect(statSync(p).mode & 0o777).toBe(0o600);
  });
});

describe('DELETE /agents cascade (spec §4.3 rule 3)', () => {
  it('when the agent is deleted, then its webhook URL answers 401, its inbox is gone and a new agent of that id starts empty', async () => {
    const { path } = await agentWithWebhook(app.base, 'gone');
    const r = await postWebhook(app.base, path, 'before');
    expect(r.status).toBe(202);
    const logPath = join(app.dataDir, 'agents', 'gone', 'state', 'events.jsonl');
    expect(existsSync(logPath)).toBe(true);
    const d = await call(app.base, 'DELETE', '/agents/gone');
    expect(d.body).toMatchObject({ agent_id: 'gone', deleted: true });
    expect((await postWebhook(app.base, path, 'after')).status).toBe(401);
    expect(existsSync(logPath)).toBe(false);
    await call(app.base, 'POST', '/agents', { body: { agent_id: 'gone' } });
    const list = await app.client('gone').exec('main', '/events list --all');
    expect(list.body).toBe('Event inbox of gone — 0 events (0 pending, 0 acked; newest first)\n---\n  (no events)');
    expect((await call(app.base, 'GET', '/agents/gone/webhook')).body.webhook_url).not.toContain(path);
  });
});

describe('persistence across restarts (spec §2: tokens persist; behaviour.md §9.8: index rebuilt)', () => {
  it('when the daemon is recomposed on the same data dir, then the token and the events are still there', async () => {
    const first = await startApp({ memory: false });
    const { path } = await agentWithWebhook(first.base, 'keep');
    const r = await postWebhook(first.base, path, 'survives');
    await first.client('keep').exec('main', `/events.ack ${r.body.event_id}`);
    await first.close();
    const second = await startApp({ memory: false, env: { SVC_DATA_DIR: first.dataDir } });
    try {
      expect((await call(second.base, 'GET', '/agents/keep/webhook')).body.webhook_url).toContain(path);
      expect((await postWebhook(second.base, path, 'again')).status).toBe(202);
      const list = await second.client('keep').exec('main', '/events --all');
      expect(list.body).toMatch(/— 2 events \(1 pending, 1 acked; newest first\)/);
      expect(list.body).toContain('acked    ');
    } finally {
      await second.close();
    }
  });
});
