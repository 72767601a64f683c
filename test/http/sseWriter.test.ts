import { describe, expect, it, jest } from '@jest/globals';
import type { ServerResponse } from 'node:http';
import { HEADERS_WINDOW_MS } from '../../src/domain/limits.js';
import type { CommandEvent, ExecOutput, Ticket } from '../../src/domain/ticket.js';
import { streamCommand } from '../../src/http/sse.js';

/**
 * A ServerResponse that shows what its client would have received so far: the status line and
 * headers once they left (flushed, or with the body), the body bytes, whether the body ended, and
 * how many times data went out (flushHeaders, write and end each put bytes on the socket).
 */
function fakeResponse() {
  const seen = { status: 0, headers: {} as Record<string, unknown>, body: '', ended: false, destroyed: false, sends: 0 };
  let pendingHead: { status: number; headers: Record<string, unknown> } | null = null;
  const show = () => {
    if (pendingHead) ({ status: seen.status, headers: seen.headers } = pendingHead);
    pendingHead = null;
  };
  const res = {
    writableEnded: false,
    destroyed: false,
    // node:http holds the head until the first flush, write or end.
    writeHead(status: number, headers: Record<string, unknown>) { pendingHead = { status, headers }; return res; },
    flushHeaders() { show(); seen.sends++; },
    write(chunk: string) { show(); seen.body += chunk; seen.sends++; return true; },
    end(chunk?: string) { show(); seen.body += chunk ?? ''; seen.ended = true; seen.sends++; res.writableEnded = true; return res; },
    on() { return res; },
    destroy() { seen.destroyed = true; res.destroyed = true; return res; },
  };
  return { res: res as unknown as ServerResponse, seen };
}

/** The events of an SSE body, by name. */
const eventNames = (body: string): string[] => [...body.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);

const ticket: Ticket = { id: 't1', cmd: '/exec echo hi', requestId: null, via: 'exec', queuedAt: 0 } as Ticket;
const base = { agentId: 'leo', topic: 'bash:b', ticket, at: 0 };
const output: ExecOutput = {
  head: { ok: true, code: null, cmd: '/exec echo hi', request_id: null, agent_id: 'leo', topic: 'bash:b', topic_type: 'bash', meta: null },
  content: 're: /exec echo hi\nexit: 0 | cwd: ~\n---\nhi',
};
const finished = { ...base, type: 'command.finished', result: { ok: true, code: null, body: '', meta: null, topic: 'bash:b', topicType: 'bash' }, output } as CommandEvent;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('http/sse.ts streamCommand: when the answer goes out (behaviour.md §9.4)', () => {
  it('when the command finishes within the headers window, then the client gets nothing before, and then status, headers and the whole answer at once, with a Content-Length', async () => {
    const { res, seen } = fakeResponse();
    let emit!: (ev: CommandEvent) => void;
    const done = streamCommand(res, { submit: (l) => { emit = l; return { leave() {} }; } });
    emit({ ...base, type: 'command.started' });
    await sleep(1);
    expect(seen).toEqual({ status: 0, headers: {}, body: '', ended: false, destroyed: false, sends: 0 });
    emit(finished);
    await done;
    expect({ status: seen.status, type: seen.headers['Content-Type'], length: seen.headers['Content-Length'], ended: seen.ended, sends: seen.sends })
      .toEqual({ status: 200, type: 'text/event-stream', length: Buffer.byteLength(seen.body), ended: true, sends: 1 });
    expect(eventNames(seen.body)).toEqual(['head', 'content', 'done']);
    expect(seen.body).toContain(`data: ${JSON.stringify(output.content)}\n\n`);
  });

  it('when the command runs past the window, then the 200 headers reach the client while it runs (no Content-Length), and the events follow', async () => {
    const { res, seen } = fakeResponse();
    let emit!: (ev: CommandEvent) => void;
    const done = streamCommand(res, { submit: (l) => { emit = l; return { leave() {} }; } });
    emit({ ...base, type: 'command.started' });
    await sleep(HEADERS_WINDOW_MS + 20);
    expect({ status: seen.status, type: seen.headers['Content-Type'], length: seen.headers['Content-Length'], body: seen.body, ended: seen.ended })
      .toEqual({ status: 200, type: 'text/event-stream', length: undefined, body: '', ended: false });
    emit(finished);
    await done;
    expect(eventNames(seen.body)).toEqual(['head', 'content', 'done']);
    expect(seen.ended).toBe(true);
  });

  it('when writing the answer throws, then the stream is destroyed, a warning says why, and the exchange still ends (no uncaught exception)', async () => {
    const { res, seen } = fakeResponse();
    const warnings: string[] = [];
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation((w: string | Error) => { warnings.push(String(w)); });
    try {
      let emit!: (ev: CommandEvent) => void;
      const done = streamCommand(res, { submit: (l) => { emit = l; return { leave() {} }; } }, () => { throw new Error('head broke'); });
      emit({ ...base, type: 'command.started' });
      emit(finished);
      await done;
      await sleep(5);
      expect({ destroyed: seen.destroyed, body: seen.body, status: seen.status }).toEqual({ destroyed: true, body: '', status: 0 });
      expect(warnings).toEqual(['answer of t1 not written: head broke']);
    } finally {
      spy.mockRestore();
    }
  });

  it('when the topic starts its next ticket one microtask after command.finished (actors/tree.ts runTicket), then nothing of this answer has gone out when that start runs', async () => {
    const { res, seen } = fakeResponse();
    let emit!: (ev: CommandEvent) => void;
    const done = streamCommand(res, { submit: (l) => { emit = l; return { leave() {} }; } });
    emit({ ...base, type: 'command.started' });
    // What the topic machine does on command.done with a ticket waiting: emit, then runTicket's microtask.
    emit(finished);
    let sentAtNextStart = -1;
    void Promise.resolve().then(() => { sentAtNextStart = seen.sends; });
    await done;
    expect({ sentAtNextStart, sends: seen.sends, ended: seen.ended }).toEqual({ sentAtNextStart: 0, sends: 1, ended: true });
  });
});
