import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApp, type TestApp } from '../helpers/app.js';
import type { EventsService } from '../../src/services/events.js';

let t: TestApp;
beforeAll(async () => { t = await startApp({ memory: false }); });
afterAll(async () => { await t.close(); });

const tokenOf = (url: unknown) => String(url).split('/webhook/')[1] as string;

/** Every string reachable from `root` (own fields, Maps, Sets, arrays; a class's private fields are not reachable). */
function stringsIn(root: unknown, seen = new Set<unknown>()): string[] {
  if (typeof root === 'string') return [root];
  if (root === null || typeof root !== 'object' || seen.has(root)) return [];
  seen.add(root);
  const out: string[] = [];
  const values = root instanceof Map ? [...root.keys(), ...root.values()] : root instanceof Set ? [...root] : Object.values(root);
  for (const v of values) out.push(...stringsIn(v, seen));
  return out;
}

describe('the webhook actor holds the token (spec §3 Webhook token; architecture.md one writer)', () => {
  it('when tokens are created and rotated, then the service keeps fingerprints only, the actor a hash and a masked form, and intake follows the actor', async () => {
    const reg = await call(t.base, 'POST', '/agents', { body: { agent_id: 'holder', webhook: true } });
    const first = tokenOf((reg.body as { webhook_url: string }).webhook_url);
    const rotated = await call(t.base, 'POST', '/agents/holder/webhook');
    const second = tokenOf((rotated.body as { webhook_url: string }).webhook_url);
    expect(second).not.toBe(first);
    const service = (t.c.system.services as unknown as { events: EventsService }).events.webhooks;
    // Its own state, not the registry and directory it was given (the registry is the value's one copy).
    const { deps: _deps, ...own } = service as unknown as Record<string, unknown>;
    const held = stringsIn(own);
    expect(held.some((s) => s.includes(first) || s.includes(second))).toBe(false);
    expect(held.filter((s) => /^[0-9a-f]{64}$/.test(s)).length).toBeGreaterThan(0);
    const actor = t.c.system.directory.webhook('holder', () => ({ fingerprint: null, masked: null }));
    const ctx = JSON.stringify(actor?.getSnapshot().context);
    expect(ctx).not.toContain(second);
    expect(actor?.getSnapshot().context).toMatchObject({ masked: `${second.slice(0, 7)}…` });
    // The old token stopped before the rotation answered; the new one is taken.
    expect((await fetch(`${t.base}/webhook/${first}`, { method: 'POST', body: 'x' })).status).toBe(401);
    expect((await fetch(`${t.base}/webhook/${second}`, { method: 'POST', body: 'x' })).status).toBe(202);
  });

  it('when ten rotations race, then exactly the last answered token works and GET shows it', async () => {
    await call(t.base, 'POST', '/agents', { body: { agent_id: 'racer2' } });
    const answers = await Promise.all(Array.from({ length: 10 }, () => call(t.base, 'POST', '/agents/racer2/webhook')));
    const tokens = answers.map((a) => tokenOf((a.body as { webhook_url: string }).webhook_url));
    expect(new Set(tokens).size).toBe(10);
    const shown = tokenOf(((await call(t.base, 'GET', '/agents/racer2/webhook')).body as { webhook_url: string }).webhook_url);
    expect(tokens).toContain(shown);
    const statuses = await Promise.all(tokens.map(async (tok) => (await fetch(`${t.base}/webhook/${tok}`, { method: 'POST', body: 'y' })).status));
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses[tokens.indexOf(shown)]).toBe(202);
  });
});
