import { describe, expect, it } from '@jest/globals';
import { LoomClient } from '../../src/client/index.js';
import { watch, watchLine } from '../../src/cli/event.js';
import { freePort } from '../helpers/daemon.js';

describe('loom event watch reconnect backoff', () => {
  it('when the daemon stays unreachable, then the waits are 1, 2, 4, 8, 16, 30, 30 s', async () => {
    const c = new LoomClient(`http://127.0.0.1:${await freePort()}`, 'leo');
    const ac = new AbortController();
    const waits: number[] = [];
    const errs: string[] = [];
    const code = await watch(c, { signal: ac.signal }, {
      out: () => undefined,
      err: (l) => errs.push(l),
      sleep: async (ms) => {
        waits.push(ms);
        if (waits.length === 7) ac.abort();
      },
    });
    expect(code).toBe(0);
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(errs[0]).toMatch(/^loom: event stream unavailable \(.*\); reconnecting in 1 s$/);
  });

  it('when an event is printed, then the line is id, time and the /events preview (… when more lines follow)', () => {
    expect(watchLine({ id: 'evt_X', receivedAt: '2025-06-01T10:00:00.000Z', text: '\n  Build   failed\nmore' })).toBe('evt_X  2025-06-01T10:00:00.000Z  Build failed…');
    expect(watchLine({ id: 'evt_X', receivedAt: '2025-06-01T10:00:00.000Z', text: 'one line' })).toBe('evt_X  2025-06-01T10:00:00.000Z  one line');
  });
});
