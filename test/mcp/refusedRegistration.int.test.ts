import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';
import { MCP_HEADERS, rpc } from './helpers.js';

/**
 * spec §4.8 auto-registration happens for a request that is served: one the MCP transport refuses
 * registers no agent (`default` without X-Agent-Id) and makes no home.
 */
let t: TestApp;
beforeAll(async () => { t = await startApp({ memory: false }); });
afterAll(async () => {
  await t?.close();
  if (t) rmSync(t.dataDir, { recursive: true, force: true });
});

const call1 = rpc('tools/call', { name: 'loom', arguments: { topic: 'main', cmd: '/help' } });

describe('a refused /mcp request (spec §4.8, behaviour.md §10.1)', () => {
  it.each([
    ['no Accept', { 'Content-Type': 'application/json' }, 406],
    ['Accept: application/json only', { 'Content-Type': 'application/json', Accept: 'application/json' }, 406],
    ['Content-Type: text/plain', { 'Content-Type': 'text/plain', Accept: MCP_HEADERS.Accept }, 415],
    ['an unsupported MCP-Protocol-Version', { ...MCP_HEADERS, 'MCP-Protocol-Version': '1999-01-01' }, 400],
  ])('with %s is refused and registers no agent', async (_what, headers, status) => {
    for (const agent of [undefined, 'refused-one']) {
      const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...headers, ...(agent ? { 'X-Agent-Id': agent } : {}) }, body: call1 });
      expect(r.status).toBe(status);
    }
    const agents = (await call(t.base, 'GET', '/agents')).body.agents as Array<{ id: string }>;
    expect(agents.map((a) => a.id)).toEqual([]);
    expect(existsSync(join(t.dataDir, 'agents', 'default'))).toBe(false);
    expect(existsSync(join(t.dataDir, 'agents', 'refused-one'))).toBe(false);
  });

  it('while a served one registers it: a ping without X-Agent-Id, a tool call with it', async () => {
    expect((await raw(t.port, { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: rpc('ping') })).status).toBe(200);
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, 'X-Agent-Id': 'served-one' }, body: call1 });
    expect(r.status).toBe(200);
    expect(r.body).toContain('"isError":false');
    const agents = (await call(t.base, 'GET', '/agents')).body.agents as Array<{ id: string; home: string }>;
    expect(agents.map((a) => a.id).sort()).toEqual(['default', 'served-one']);
    expect(existsSync(agents[0].home)).toBe(true);
  });
});
