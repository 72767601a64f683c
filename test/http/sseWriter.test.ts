import { describe, expect, it, jest } from '@jest/globals';
import type { ServerResponse } from 'node:http';
import { HEADERS_WINDOW_MS } from '../../src/domain/limits.js';
import type { CommandEvent, ExecOutput, Ticket } from '../../src/domain/ticket.js';
import { streamCommand } from '../../src/http/sse.js';

/** A ServerResponse that records what is written to it, in order. */
function fakeResponse() {
  const calls: string[] = [];
  const res = {
    writableEnded: false,
    destroyed: false,
    writeHead(status: number, headers: Record<string, unknown>) { calls.push(`head ${status}${'Content-Length' in headers ? ' length' : ''}`); return res; },
    flushHeaders() { calls.push('flush'); },
    write(chunk: string) { calls.push(`write ${chunk.split('\n')[0]}`); return true; },
    end(chunk?: string) { calls.push(`end${chunk ? ` ${chunk.split('\n')[0]}` : ''}`); res.writableEnded = true; return res; },
    on() { return res; },
    destroy() { calls.push('destroy'); res.destroyed = true; return res; },
  };
  return { res: res as unknown as ServerResponse, calls };
}

const ticket: Ticket = { id: 't1', cmd: '/exec echo hi', requestId: null, via: 'exec', queuedAt: 0 } as Ticket;
const base = { agentId: 'leo', topic: 'bash:b', ticket, at: 0 };
const output: ExecOutput = {
  head: { ok: true, code: null, cmd: '/exec echo hi', request_id: null, agent_id: 'leo', topic: 'bash:b', topic_type: 'bash', meta: null },
  content: 're: /exec echo hi\nexit: 0 | cwd: ~\n---\nhi',
};
const finished = { ...base, type: 'command.finished', result: { ok: true, code: null, body: '', meta: null, topic: 'bash:b', topicType: 'bash' }, output } as CommandEvent;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('http/sse.ts streamCommand: when the answer goes out (behaviour.md §9.4)', () => {
  it('when the command finishes within the headers window, then headers and events go out in one end() with a Content-Length', async () => {
    const { res, calls } = fakeResponse();
    let emit!: (ev: CommandEvent) => void;
    const done = streamCommand(res, { submit: (l) => { emit = l; return { leave() {} }; } });
    emit({ ...base, type: 'command.started' });
    await sleep(1);
    expect(calls).toEqual([]);
    emit(finished);
    await done;
    expect(calls).toEqual(['head 200 length', 'end event: head']);
  });

  it('when the command runs past the window, then the 200 headers go out on their own, and the events follow chunked', async () => {
    const { res, calls } = fakeResponse();
    let emit!: (ev: CommandEvent) => void;
    const done = streamCommand(res, { submit: (l) => { emit = l; return { leave() {} }; } });
    emit({ ...base, type: 'command.started' });
    await sleep(HEADERS_WINDOW_MS + 20);
    expect(calls).toEqual(['head 200', 'flush']);
    emit(finished);
    await done;
    expect(calls).toEqual(['head 200', 'flush', 'end event: head']);
  });

  it('when writing the answer throws, then the stream is destroyed, a warning says why, and the exchange still ends (no uncaught exception)', async () => {
    const { res, calls } = fakeResponse();
    const warnings: string[] = [];
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation((w: string | Error) => { warnings.push(String(w)); });
    try {
      let emit!: (ev: CommandEvent) => void;
      const done = streamCommand(res, { submit: (l) => { emit = l; return { leave() {} }; } }, () => { throw new Error('head broke'); });
      emit({ ...base, type: 'command.started' });
      emit(finished);
      await done;
      await sleep(5);
      expect(calls).toEqual(['destroy']);
      expect(warnings).toContain('answer of t1 not written: head broke');
    } finally {
      spy.mockRestore();
    }
  });

  it('when the topic starts its next ticket one microtask after command.finished (actors/tree.ts runTicket), then that start comes before this answer is written', async () => {
    const { res, calls } = fakeResponse();
    let emit!: (ev: CommandEvent) => void;
    const done = streamCommand(res, { submit: (l) => { emit = l; return { leave() {} }; } });
    emit({ ...base, type: 'command.started' });
    // What the topic machine does on command.done with a ticket waiting: emit, then runTicket's microtask.
    emit(finished);
    void Promise.resolve().then(() => calls.push('next ticket started'));
    await done;
    expect(calls).toEqual(['next ticket started', 'head 200 length', 'end event: head']);
  });
});
