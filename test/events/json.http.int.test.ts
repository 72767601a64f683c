import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApp, type TestApp } from '../helpers/app.js';

/*
 * The inbox as JSON for `loom event … --json` (beyond spec; docs/events.md): GET
 * /agents/{id}/events[?all=1], GET /agents/{id}/events/{event_id}, POST /agents/{id}/events/ack.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
  await call(t.base, 'POST', '/agents', { body: { agent_id: 'ann', webhook: true } });
});
afterAll(async () => { await t?.close(); });

async function post(text: string): Promise<string> {
  const url = (await t.client().webhook('ann')).body.webhook_url;
  return ((await (await fetch(url, { method: 'POST', body: text })).json()) as { event_id: string }).event_id;
}

describe('GET /agents/{id}/events (beyond spec)', () => {
  it('when events are pending, then they are listed newest first with exactly the six spec fields', async () => {
    const a = await post('first\nwith a second line');
    const b = await post('second');
    const r = await call(t.base, 'GET', '/agents/ann/events');
    expect(r.status).toBe(200);
    expect(r.body.agent_id).toBe('ann');
    expect(r.body.pending).toBe(2);
    expect(r.body.events.map((e: { id: string }) => e.id)).toEqual([b, a]);
    expect(r.body.events[1]).toEqual({ id: a, agentId: 'ann', receivedAt: expect.any(String), source: 'local-webhook', text: 'first\nwith a second line', status: 'pending' });
  });

  it('when an event is read, then it is returned and stays pending; an unknown id is 404', async () => {
    const id = await post('read me');
    expect((await call(t.base, 'GET', `/agents/ann/events/${id}`)).body).toMatchObject({ id, text: 'read me', status: 'pending' });
    expect((await call(t.base, 'GET', `/agents/ann/events/${id}`)).body.status).toBe('pending');
    const missing = await call(t.base, 'GET', '/agents/ann/events/evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2');
    expect(missing).toMatchObject({ status: 404, body: { error: 'Event not found: evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2' } });
  });

  it('when ids are acked, then the answer says which were already acked; ?all=1 lists acked ones too', async () => {
    const id = await post('ack me');
    const r = await call(t.base, 'POST', '/agents/ann/events/ack', { body: { ids: [id] } });
    expect(r).toMatchObject({ status: 200, body: { agent_id: 'ann', acked: [{ id, already: false }] } });
    expect((await call(t.base, 'POST', '/agents/ann/events/ack', { body: { ids: [id] } })).body.acked).toEqual([{ id, already: true }]);
    expect((await call(t.base, 'GET', '/agents/ann/events')).body.events.map((e: { id: string }) => e.id)).not.toContain(id);
    const all = await call(t.base, 'GET', '/agents/ann/events?all=1');
    expect(all.body.events.find((e: { id: string }) => e.id === id)).toMatchObject({ status: 'acked' });
  });

  it('when an ack names an unknown id, then 404 and nothing changes; all: true acks every pending event', async () => {
    const id = await post('stay pending');
    const r = await call(t.base, 'POST', '/agents/ann/events/ack', { body: { ids: [id, 'evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2'] } });
    expect(r).toMatchObject({ status: 404, body: { error: 'Event not found: evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2' } });
    expect((await call(t.base, 'GET', `/agents/ann/events/${id}`)).body.status).toBe('pending');
    const every = await call(t.base, 'POST', '/agents/ann/events/ack', { body: { all: true } });
    expect(every.body.acked.map((x: { id: string }) => x.id)).toContain(id);
    expect((await call(t.base, 'GET', '/agents/ann/events')).body).toMatchObject({ pending: 0, events: [] });
  });

  it.each([[{}], [{ ids: [] }], [{ ids: 'evt_x' }], [{ ids: [1] }], [{ all: false }], [{ all: true, ids: ['x'] }]])('when the ack body is %j, then 400 with the usage', async (body) => {
    expect(await call(t.base, 'POST', '/agents/ann/events/ack', { body })).toMatchObject({ status: 400, body: { error: 'Give "ids" (a non-empty array of event ids) or "all": true' } });
  });

  it('when the agent is unknown, then 404 Unknown agent on every route; a wrong method is 405', async () => {
    for (const [m, p] of [['GET', '/agents/ghost/events'], ['GET', '/agents/ghost/events/evt_x'], ['POST', '/agents/ghost/events/ack']]) {
      expect(await call(t.base, m, p, m === 'POST' ? { body: { all: true } } : {})).toMatchObject({ status: 404, body: { error: 'Unknown agent: ghost' } });
    }
    expect((await call(t.base, 'DELETE', '/agents/ann/events')).status).toBe(405);
    expect((await call(t.base, 'GET', '/agents/ann/events/ack')).status).toBe(405);
  });
});
