import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, raw, startApp, type RawResponse, type TestApp } from '../helpers/app.js';

const COMMANDS = ['/help', '/open ~/w.md', '/info', '/set $TOKEN = "abcdefgh"', '/exec echo hi; echo err >&2', '/nope'];
const MCP = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Agent-Id': 'leo' };

/**
 * The headers a client sees, without Date and the framing: a command answered within the 5 ms
 * headers window goes out with a Content-Length, a slower one chunked (http/sse.ts), and a one-shot
 * `/exec` takes about that long, so its framing follows the machine's load, not the trace.
 */
function seen(headers: RawResponse['headers']): RawResponse['headers'] {
  const { date: _date, 'content-length': length, 'transfer-encoding': chunked, ...rest } = headers;
  expect(length !== undefined || chunked === 'chunked').toBe(true);
  return rest;
}

/** What a client receives for each command: status, headers (as `seen`) and the exact body bytes. */
async function session(app: TestApp): Promise<Array<{ status: number; headers: RawResponse['headers']; body: string }>> {
  await call(app.base, 'DELETE', '/sessions/leo/main');
  const out = [];
  for (const cmd of COMMANDS) {
    const r = await raw(app.port, { method: 'POST', path: '/exec', headers: { 'Content-Type': 'application/json', 'X-Agent-Id': 'leo' }, body: JSON.stringify({ cmd, topic: 'main', request_id: 'r1' }) });
    out.push({ status: r.status, headers: seen(r.headers), body: r.body });
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'loom', arguments: { topic: 'main', cmd: '/info' } } });
  const m = await raw(app.port, { method: 'POST', path: '/mcp', headers: MCP, body });
  const { date: _d, ...headers } = m.headers;
  out.push({ status: m.status, headers, body: m.body });
  return out;
}

describe('recording does not change what clients receive (behaviour.md §14.1)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
    await app.client().registerAgent({ agent_id: 'leo' });
    writeFileSync(join(app.c.system.agentHome('leo') as string, 'w.md'), '# W\n\nsome text\n');
  });
  afterAll(async () => { await app?.close(); });

  it('the SSE and MCP bytes are the same with and without an active trace', async () => {
    const before = await session(app);
    const id = (await call(app.base, 'POST', '/traces', { body: { agent_id: 'leo' } })).body.trace_id;
    const during = await session(app);
    const stopped = await call(app.base, 'DELETE', `/traces/${id}`);
    expect(stopped.body.steps).toBeGreaterThanOrEqual(COMMANDS.length + 1);
    expect(before.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    expect(before[0].body).toMatch(/^event: head\ndata: .*\n\nevent: content\n/);
    expect(during).toEqual(before);
  });
});
