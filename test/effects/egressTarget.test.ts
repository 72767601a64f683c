import { describe, expect, it } from '@jest/globals';
import { networkInterfaces } from 'node:os';
import { decideTarget, isLocalAddress } from '../../src/effects/egressTarget.js';
import type { ConnectGuard } from '../../src/domain/networkPolicy.js';

describe('isLocalAddress: where the daemon port is guarded', () => {
  it("loopback, unspecified and this machine's interface addresses are local; others are not", () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '0.0.0.0', '::', '::ffff:127.0.0.1']) expect(isLocalAddress(a)).toBe(true);
    const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
    expect(own.length).toBeGreaterThan(0);
    for (const a of own) expect(isLocalAddress(a)).toBe(true);
    expect(isLocalAddress('192.0.2.1')).toBe(false);
    expect(isLocalAddress('2001:db8::1')).toBe(false);
  });
});

describe('decideTarget: one lookup, the first accepted address, the first reason', () => {
  const guard: ConnectGuard = { daemonPort: 4000, proxyPort: 4001, isLocal: (a) => a === '127.0.0.1' };
  const answers = (...addresses: string[]) => () => Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 as const : 4 as const })));

  it('connects to the first address the policy accepts, as that literal', async () => {
    expect(await decideTarget('public', 'a.test', 443, guard, answers('10.0.0.1', '93.184.216.34', '1.1.1.1'))).toEqual({ kind: 'connect', address: '93.184.216.34' });
    expect(await decideTarget('public', '93.184.216.34', 443, guard, () => Promise.reject(new Error('literal looked up')))).toEqual({ kind: 'connect', address: '93.184.216.34' });
  });

  it('refuses with the first reason when nothing is accepted; an answer that is not an address is refused too', async () => {
    expect(await decideTarget('public', 'a.test', 443, guard, answers('10.0.0.1', '127.0.0.1'))).toEqual({ kind: 'denied', reason: 'private address 10.0.0.1' });
    expect(await decideTarget('open', 'a.test', 4000, guard, answers('127.0.0.1'))).toEqual({ kind: 'denied', reason: 'daemon port' });
    expect(await decideTarget('open', 'a.test', 80, guard, answers('evil.test'))).toEqual({ kind: 'denied', reason: 'not an address evil.test' });
  });

  it('a failed or empty lookup is unresolved, with the code', async () => {
    const fail = () => Promise.reject(Object.assign(new Error('nope'), { code: 'EAI_AGAIN' }));
    expect(await decideTarget('public', 'a.test', 443, guard, fail)).toEqual({ kind: 'unresolved', code: 'EAI_AGAIN' });
    expect(await decideTarget('public', 'a.test', 443, guard, answers())).toEqual({ kind: 'unresolved', code: 'no address' });
  });
});
