import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { ParsedStep } from '../../src/domain/trace.js';
import { ExecTransport } from '../../src/replay/http.js';
import { runSteps, type StepResult } from '../../src/replay/run.js';
import type { Target } from '../../src/replay/send.js';

/*
 * Waits longer than setTimeout can hold (2^31-1 ms): Node fires those after 1 ms. A trace's sleep is
 * capped at parse time, but --speed below 1 scales recorded gaps past the cap, and they must still wait.
 */

afterEach(() => { jest.useRealTimers(); });

describe('loom replay --speed waits (behaviour.md §14.3)', () => {
  it('a sleep scaled past setTimeout\'s maximum waits its whole time, not 1 ms', async () => {
    jest.useFakeTimers();
    const http = new ExecTransport('http://127.0.0.1:9');
    const target: Target = { url: 'http://127.0.0.1:9', port: 9, lookup: () => undefined, secrets: [], ids: new Map(), agentHome: async () => '/nonexistent', http };
    const steps: ParsedStep[] = [{ line: 1, step: { seq: 1, kind: 'sleep', ms: 2 ** 31 - 1 } }];
    const seen: StepResult[] = [];
    const done = runSteps(steps, { target, agentMap: new Map(), speed: 0.5 }, (r) => seen.push(r));
    await jest.advanceTimersByTimeAsync(1000);
    expect(seen).toEqual([]);
    // 2^31-1 ms at speed 0.5: 2^32-2 ms in all.
    await jest.advanceTimersByTimeAsync(2 ** 32 - 2 - 1000 - 5);
    expect(seen).toEqual([]);
    await jest.advanceTimersByTimeAsync(10);
    expect(seen.map((r) => r.verdict)).toEqual(['not_compared']);
    await done;
    http.close();
  });
});
