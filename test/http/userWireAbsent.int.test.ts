import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

/*
 * behaviour.md §11 row "absent": the user wire serves no /webhook/…, /events/stream, /mcp,
 * /capabilities, /fs or /agents… (404 as any unknown path, behaviour.md §9.1), and the commands of
 * those surfaces answer COMMAND_UNSUPPORTED with the user-wire text.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ env: { SVC_WIRE: 'user' } });
  await call(t.base, 'POST', '/users', { body: { id: 'ann', home: join(tempDir(), 'ann') } });
});
afterAll(async () => { await t?.close(); });

describe('absent routes: 404 Not found: <METHOD> <path>', () => {
  it.each([
    ['POST', '/webhook/wh_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG'],
    ['GET', '/events/stream'],
    ['POST', '/mcp'],
    ['GET', '/mcp'],
    ['DELETE', '/mcp'],
    ['POST', '/capabilities'],
    ['GET', '/capabilities'],
    ['DELETE', '/capabilities/cap_AAAAAAAAAAAAAAAA'],
    ['PUT', '/fs/notes.md'],
    ['GET', '/fs/notes.md'],
    ['DELETE', '/fs/notes.md'],
    ['GET', '/fs'],
    ['GET', '/agents'],
    ['POST', '/agents'],
    ['DELETE', '/agents/ann'],
    ['GET', '/agents/ann/webhook'],
    ['POST', '/agents/ann/webhook'],
  ])('%s %s', async (method, path) => {
    const headers = { 'X-User-Id': 'ann', 'X-Agent-Id': 'ann', Authorization: 'Bearer caps_x', 'Content-Type': 'application/json' };
    const r = await raw(t.port, { method, path, headers, body: method === 'GET' || method === 'DELETE' ? undefined : '{"agent_id":"ann"}' });
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body)).toEqual({ error: `Not found: ${method} ${path}` });
  });

  it('HEAD /fs/x is 404 with no body', async () => {
    const r = await raw(t.port, { method: 'HEAD', path: '/fs/x', headers: { Authorization: 'Bearer caps_x' } });
    expect(r.status).toBe(404);
    expect(r.body).toBe('');
  });

  it('nothing of those surfaces was registered: registering through /agents changed no user', async () => {
    await call(t.base, 'POST', '/agents', { body: { agent_id: 'sneaky' } });
    expect(t.c.system.hasAgent('sneaky')).toBe(false);
  });
});

describe('absent commands: ERROR(COMMAND_UNSUPPORTED): /<word> is not available in the user wire variant', () => {
  it.each([
    ['/events', '/events'],
    ['/events list --all', '/events'],
    ['/events.read evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2', '/events.read'],
    ['/events.ack --all', '/events.ack'],
    ['/events.clear', '/events.clear'],
    ['/EVENTS.clear --all', '/events.clear'],
    ['/webhook', '/webhook'],
    ['/webhook show', '/webhook'],
    ['/webhook rotate', '/webhook'],
    ['/events\nwith a body', '/events'],
  ])('%j', async (cmd, shown) => {
    for (const topic of ['file:notes', 'app:weather', 'bash:sh']) {
      const r = await t.client('ann').exec(topic, cmd);
      expect(r.status).toBe(200);
      expect(r.head).toMatchObject({ ok: false, code: 'COMMAND_UNSUPPORTED', user_id: 'ann' });
      expect(r.body).toBe(`ERROR(COMMAND_UNSUPPORTED): ${shown} is not available in the user wire variant`);
    }
  });

  it('other unknown words keep the generic answer', async () => {
    const r = await t.client('ann').exec('file:notes', '/frobnicate');
    expect(r.body).toBe('ERROR(COMMAND_UNSUPPORTED): Unknown command: /frobnicate\nRecovery: /help lists the commands');
  });
});
