import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type Socket } from 'node:net';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';

/**
 * Spec §4.7 on the wire, byte for byte, on one keep-alive connection: the `/exec` answer must carry
 * exactly `head`, `content`, `done` and end cleanly, so that the next request on the same socket
 * is answered (Node 22/24 regression: a corked tail after flushHeaders() sent an empty body and
 * desynchronised the connection, HPE_INVALID_CONSTANT on the next answer).
 */

/** Reads whole HTTP/1.1 responses (chunked or Content-Length) from one socket, in order. */
class RawConnection {
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  constructor(private readonly sock: Socket) {
    sock.on('data', (d: Buffer) => { this.buf = Buffer.concat([this.buf, d]); this.wake(); });
    sock.on('close', () => this.wake());
  }

  private wake(): void { for (const w of this.waiters.splice(0)) w(); }

  private async need(pred: () => boolean): Promise<void> {
    while (!pred()) {
      if (this.sock.destroyed && !pred()) throw new Error(`socket closed; buffered: ${JSON.stringify(this.buf.toString('latin1'))}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  send(text: string): void { this.sock.write(text); }

  /** The next response: status line, headers (lower-cased), the raw body bytes as sent, and the decoded body. */
  async response(): Promise<{ status: string; headers: Map<string, string>; rawBody: string; body: string }> {
    await this.need(() => this.buf.includes('\r\n\r\n'));
    const headEnd = this.buf.indexOf('\r\n\r\n');
    const [status, ...lines] = this.buf.subarray(0, headEnd).toString('latin1').split('\r\n');
    const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    let pos = headEnd + 4;
    let body = '';
    if (headers.get('transfer-encoding') === 'chunked') {
      for (;;) {
        await this.need(() => this.buf.indexOf('\r\n', pos) >= 0);
        const lineEnd = this.buf.indexOf('\r\n', pos);
        const size = parseInt(this.buf.subarray(pos, lineEnd).toString('latin1'), 16);
        expect(Number.isNaN(size)).toBe(false);
        await this.need(() => this.buf.length >= lineEnd + 2 + size + 2);
        body += this.buf.subarray(lineEnd + 2, lineEnd + 2 + size).toString('utf8');
        expect(this.buf.subarray(lineEnd + 2 + size, lineEnd + 4 + size).toString('latin1')).toBe('\r\n');
        pos = lineEnd + 4 + size;
        if (size === 0) break;
      }
    } else {
      const len = Number(headers.get('content-length') ?? '0');
      await this.need(() => this.buf.length >= pos + len);
      body = this.buf.subarray(pos, pos + len).toString('utf8');
      pos += len;
    }
    const rawBody = this.buf.subarray(headEnd + 4, pos).toString('latin1');
    this.buf = this.buf.subarray(pos);
    return { status, headers, rawBody, body };
  }

  /** Bytes received beyond the last whole response (must be none). */
  get leftover(): string { return this.buf.toString('latin1'); }
}

function execRequest(port: number, body: object): string {
  const json = JSON.stringify(body);
  return `POST /exec HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\nX-Agent-Id: ka\r\n`
    + `Content-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
}

describe('POST /exec on a keep-alive connection (spec §4.7, every Node line)', () => {
  let d: RunningDaemon | undefined;
  let conn: RawConnection;
  let sock: Socket | undefined;

  beforeAll(async () => {
    d = await startDaemon();
    const reg = await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'ka' }) });
    expect(reg.status).toBe(200);
    const s = connect(d.port, '127.0.0.1');
    sock = s;
    await new Promise<void>((resolve, reject) => { s.once('connect', resolve); s.once('error', reject); });
    conn = new RawConnection(s);
  }, 30000);

  afterAll(async () => {
    sock?.destroy();
    await d?.stop();
  });

  it('when /exec is answered, then the body is exactly head, content and done, and the next request on the socket is answered', async () => {
    conn.send(execRequest(d!.port, { cmd: '/info', topic: 'main', request_id: 'k1' }));
    const first = await conn.response();
    expect(first.status).toBe('HTTP/1.1 200 OK');
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    expect(first.headers.get('connection')).toBe('keep-alive');
    const events = first.body.split('\n\n');
    expect(events.pop()).toBe('');
    expect(events.map((e) => e.split('\n')[0])).toEqual(['event: head', 'event: content', 'event: done']);
    const head = JSON.parse(events[0].split('\n')[1].slice('data: '.length)) as Record<string, unknown>;
    expect(head).toMatchObject({ ok: true, code: null, cmd: '/info', request_id: 'k1', agent_id: 'ka', topic: 'main', topic_type: 'tab' });
    const content = JSON.parse(events[1].split('\n')[1].slice('data: '.length)) as string;
    expect(content.split('\n')[0]).toBe('re: [k1] /info');
    expect(events[2]).toBe('event: done\ndata: {}');
    // /info answers in the turn it starts, so its answer is known whole when the headers go out: a
    // Content-Length of exactly its body, no chunks (behaviour.md §9.4).
    expect({ length: first.headers.get('content-length'), chunked: first.headers.get('transfer-encoding') })
      .toEqual({ length: String(Buffer.byteLength(first.rawBody, 'latin1')), chunked: undefined });

    conn.send(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${d!.port}\r\nConnection: keep-alive\r\n\r\n`);
    const second = await conn.response();
    expect(second.status).toBe('HTTP/1.1 200 OK');
    expect(JSON.parse(second.body)).toMatchObject({ ok: true, agents: 1 });

    conn.send(execRequest(d!.port, { cmd: '/nosuch', topic: 'main' }));
    const third = await conn.response();
    expect(third.status).toBe('HTTP/1.1 200 OK');
    expect(third.body).toMatch(/^event: head\ndata: \{"ok":false,"code":"COMMAND_UNSUPPORTED".*\n\nevent: content\ndata: ".*"\n\nevent: done\ndata: \{\}\n\n$/s);
    expect(conn.leftover).toBe('');
  });

  it('when a command runs past the headers window, then its answer is chunked, ends with the terminal chunk, and the socket is answered next', async () => {
    conn.send(execRequest(d!.port, { cmd: '/exec sleep 0.3', topic: 'main', request_id: 'k2' }));
    const slow = await conn.response();
    expect({ status: slow.status, chunked: slow.headers.get('transfer-encoding'), length: slow.headers.get('content-length') })
      .toEqual({ status: 'HTTP/1.1 200 OK', chunked: 'chunked', length: undefined });
    expect(slow.rawBody.endsWith('0\r\n\r\n')).toBe(true);
    expect(slow.body.split('\n\n').map((e) => e.split('\n')[0])).toEqual(['event: head', 'event: content', 'event: done', '']);
    conn.send(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${d!.port}\r\nConnection: keep-alive\r\n\r\n`);
    expect((await conn.response()).status).toBe('HTTP/1.1 200 OK');
    expect(conn.leftover).toBe('');
  });
});
