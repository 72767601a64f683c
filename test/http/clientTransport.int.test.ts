import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { DaemonUnreachable, LoomClient } from '../../src/client/index.js';
import { freePort } from '../helpers/daemon.js';

/*
 * The client's requests go through node:http (src/client/http.ts): what it sends, and how it reads
 * answers that end early, are checked against a stand-in server on 127.0.0.1.
 */

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
let handler: Handler = (_req, _body, res) => res.end();
let server: Server;
let base: string;
const closed: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => handler(req, Buffer.concat(parts).toString('utf8'), res));
    res.on('close', () => closed.push(req.url ?? ''));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('client transport (node:http)', () => {
  it('when a command is sent, then the body is JSON with its length, and the agent header is set', async () => {
    let seen: { method?: string; headers?: IncomingMessage['headers']; body?: string } = {};
    handler = (req, body, res) => {
      seen = { method: req.method, headers: req.headers, body };
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end(`event: head\ndata: ${JSON.stringify({ ok: true, code: null })}\n\nevent: content\ndata: "re: /x\\nhé"\n\nevent: done\ndata: {}\n\n`);
    };
    const out = await new LoomClient(base, 'leo').exec('main', '/x "é"');
    expect(seen.method).toBe('POST');
    expect(seen.body).toBe('{"cmd":"/x \\"é\\"","topic":"main"}');
    expect(seen.headers?.['content-type']).toBe('application/json');
    expect(seen.headers?.['content-length']).toBe(String(Buffer.byteLength(seen.body ?? '')));
    expect(seen.headers?.['x-agent-id']).toBe('leo');
    expect(seen.headers?.accept).toBe('text/event-stream');
    expect(out).toMatchObject({ status: 200, done: true, body: 'hé' });
    expect(out.incomplete).toBeUndefined();
  });

  it('when a POST has no body, then it is sent with Content-Length 0', async () => {
    let headers: IncomingMessage['headers'] = {};
    handler = (req, _body, res) => { headers = req.headers; res.end('{"ok":true,"message":"bye"}'); };
    expect(await new LoomClient(base).shutdown()).toEqual({ status: 200, body: { ok: true, message: 'bye' } });
    expect(headers['content-length']).toBe('0');
    expect(headers['transfer-encoding']).toBeUndefined();
  });

  it('when the answer stops after its head, then the outcome is STREAM_INCOMPLETE with the head kept', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(`event: head\ndata: ${JSON.stringify({ ok: true, code: null })}\n\n`, () => setTimeout(() => res.socket?.destroy(), 20));
    };
    const out = await new LoomClient(base, 'leo').exec('main', '/help');
    expect(out.head).toEqual({ ok: true, code: null });
    expect(out.incomplete).toBe('STREAM_INCOMPLETE');
    expect(out.done).toBe(false);
  });

  it('when the event stream is aborted, then it ends and the connection closes', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('event: ready\ndata: {}\n\n');
    };
    const stop = new AbortController();
    const seen: string[] = [];
    const run = (async () => {
      try {
        for await (const e of new LoomClient(base, 'leo').eventStream(stop.signal)) {
          seen.push(e.event);
          stop.abort();
        }
      } catch (err) {
        seen.push((err as Error).name);
      }
    })();
    await run;
    expect(seen).toEqual(['ready', 'AbortError']);
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toContain('/events/stream');
  });

  it('when nothing listens on the port, then DaemonUnreachable names the socket error', async () => {
    const port = await freePort();
    const err = await new LoomClient(`http://127.0.0.1:${port}`).health().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DaemonUnreachable);
    expect((err as Error).message).toBe(`cannot reach http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('when a webhook URL is not http://, then it is refused before any connection', async () => {
    const err = await new LoomClient(base).postWebhook('https://127.0.0.1:1/webhook/abc', 'hi').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DaemonUnreachable);
    expect((err as Error).message).toBe('cannot reach https://127.0.0.1:1/webhook/abc: unsupported URL scheme https: (use http://)');
  });
});
