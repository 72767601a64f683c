import { describe, expect, it, jest } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { assign, createActor, emit, setup } from 'xstate';
import { ask, sendForId, type Reply } from '../../src/actors/ask.js';

/**
 * A small echo machine: each `ping` gets the id `p<n>` as the machine takes it; `answerNow` pings
 * are answered in the same step, the others when `release` names them; `stop` ends it with an output.
 */
const echo = setup({
  types: {
    context: {} as { asked: number; held: string[] },
    events: {} as { type: 'ping'; answerNow: boolean } | { type: 'release'; id: string } | { type: 'stop' },
    emitted: {} as { type: 'pong'; id: string },
    output: {} as { stopped: number },
  },
}).createMachine({
  context: { asked: 0, held: [] },
  initial: 'on',
  states: {
    on: {
      on: {
        ping: [
          { guard: ({ event }) => event.answerNow, actions: [emit(({ context }) => ({ type: 'pong' as const, id: `p${context.asked + 1}` })), assign({ asked: ({ context }) => context.asked + 1 })] },
          { actions: assign({ asked: ({ context }) => context.asked + 1, held: ({ context }) => [...context.held, `p${context.asked + 1}`] }) },
        ],
        release: { actions: emit(({ event }) => ({ type: 'pong' as const, id: event.id })) },
        stop: 'off',
      },
    },
    off: { type: 'final' },
  },
  output: ({ context }) => ({ stopped: context.asked }),
});

type Echo = ReturnType<typeof start>;
const start = () => createActor(echo).start();
const reply: Reply<Echo, string> = {
  id: (snap) => `p${snap.context.asked}`,
  on: 'pong',
  answer: (ev, id) => ((ev as unknown as { id: string }).id === id ? `answered ${id}` : undefined),
  ended: (snap) => new Error(`ended after ${snap.output?.stopped ?? 0}`),
};

describe('ask: send to an actor and wait for its answer', () => {
  it('when the machine answers in the same step, then the answer is the one for the id the machine gave', async () => {
    const a = start();
    await expect(ask(a, { type: 'ping', answerNow: true }, reply)).resolves.toBe('answered p1');
    await expect(ask(a, { type: 'ping', answerNow: true }, reply)).resolves.toBe('answered p2');
  });

  it('when answers come later and out of order, then each request gets its own', async () => {
    const a = start();
    const first = ask(a, { type: 'ping', answerNow: false }, reply);
    const second = ask(a, { type: 'ping', answerNow: false }, reply);
    a.send({ type: 'release', id: 'p2' });
    a.send({ type: 'release', id: 'p1' });
    await expect(Promise.all([first, second])).resolves.toEqual(['answered p1', 'answered p2']);
  });

  it('when the actor ends before answering, then the request gets what `ended` says (here an error)', async () => {
    const a = start();
    const waiting = ask(a, { type: 'ping', answerNow: false }, reply);
    a.send({ type: 'stop' });
    await expect(waiting).rejects.toThrow('ended after 1');
    // An actor that has already ended answers at once, without the event.
    await expect(ask(a, { type: 'ping', answerNow: true }, reply)).rejects.toThrow('ended after 1');
  });

  it('when the signal aborts, then the request answers what onAbort gives and stops listening', async () => {
    const a = start();
    const ctl = new AbortController();
    const waiting = ask(a, { type: 'ping', answerNow: false }, reply, { signal: ctl.signal, onAbort: () => 'left' });
    ctl.abort();
    await expect(waiting).resolves.toBe('left');
    const before = new AbortController();
    before.abort();
    await expect(ask(a, { type: 'ping', answerNow: false }, reply, { signal: before.signal, onAbort: () => 'left at once' })).resolves.toBe('left at once');
  });

  it('when onAbort gives nothing, then the request goes on waiting for the actor (it was told by the abort)', async () => {
    const a = start();
    const ctl = new AbortController();
    const waiting = ask(a, null, { ended: (snap) => `stopped after ${snap.output?.stopped}` }, { signal: ctl.signal, onAbort: () => { a.send({ type: 'stop' }); return undefined; } });
    ctl.abort();
    await expect(waiting).resolves.toBe('stopped after 0');
  });

  it('when the deadline passes, then the request answers what onTimeout gives, or a timeout error', async () => {
    jest.useFakeTimers();
    try {
      const a = start();
      const quiet = ask(a, { type: 'ping', answerNow: false }, reply, { timeoutMs: 50 });
      const told = ask(a, { type: 'ping', answerNow: false }, reply, { timeoutMs: 50, onTimeout: () => 'gave up' });
      jest.advanceTimersByTime(50);
      await expect(quiet).rejects.toThrow('did not answer within 50 ms');
      await expect(told).resolves.toBe('gave up');
    } finally {
      jest.useRealTimers();
    }
  });

  it('when a request is sent from inside the actor\'s own step, then it fails at once instead of taking another request\'s id', () => {
    const a = start();
    let inner: unknown = null;
    a.on('pong', () => {
      try {
        sendForId(a, { type: 'ping', answerNow: false }, (snap) => `p${snap.context.asked}`);
      } catch (err) {
        inner = err;
      }
    });
    a.send({ type: 'ping', answerNow: true });
    expect(String(inner)).toMatch(/did not take ping in this step/);
  });
});

describe('one way to wait for an actor', () => {
  const count = (dir: string): number => readdirSync(dir).reduce((n, f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return n + count(p);
    return p.endsWith('.ts') ? n + (readFileSync(p, 'utf8').match(/new Promise\b/g) ?? []).length : n;
  }, 0);

  it('at most two hand-made promises remain in services, actors, commands and routes (ask is one)', () => {
    const total = ['src/services', 'src/actors', 'src/commands', 'src/http/routes'].reduce((n, d) => n + count(d), 0);
    expect(total).toBeLessThanOrEqual(2);
  });
});
