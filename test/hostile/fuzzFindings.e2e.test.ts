import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunningDaemon } from '../helpers/daemon.js';
import { Daemons, exec, json } from './support.js';

/** What the fuzzer found beyond the hostile suites' own cases, each pinned by a test. */

const daemons = new Daemons();
let d: RunningDaemon;
beforeAll(async () => {
  d = await daemons.start();
  await json(d.base, 'POST', '/agents', { agent_id: 'fz' });
});
afterAll(() => daemons.killAll());

const rpc = async (body: unknown) => {
  const res = await fetch(`${d.base}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Agent-Id': 'fz' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as unknown };
};

describe('fuzzer findings', () => {
  it.each([['"x"', 'x'], ['null', null], ['a list', [1]]])('when tools/call has arguments %s, then JSON-RPC -32602 Invalid params, not -32603', async (_name, args) => {
    const r = await rpc({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'loom', arguments: args } });
    expect(r.status).toBe(200);
    const err = (r.body as { id: number; error: { code: number; message: string } });
    expect(err.id).toBe(7);
    expect(err.error.code).toBe(-32602);
    expect(err.error.message).toMatch(/^MCP error -32602: Invalid params for tools\/call: params\.arguments: Invalid input: expected record/);
  });

  it('when a batch mixes a bad tools/call with a good one, then each gets its own answer', async () => {
    const r = await rpc([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'loom', arguments: 'x' } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'loom', arguments: { topic: 'main', cmd: '/help set' } } },
    ]);
    const answers = r.body as Array<{ id: number; error?: { code: number }; result?: { isError?: boolean } }>;
    expect(answers.find((a) => a.id === 1)?.error?.code).toBe(-32602);
    expect(answers.find((a) => a.id === 2)?.result?.isError).toBe(false);
  });

  it('when /exec text holds a NUL byte, then INVALID_ARGS, not INTERNAL_ERROR', async () => {
    const r = await exec(d.base, 'fz', 'main', '/exec echo a\u0000b');
    expect(r.body).toBe('ERROR(INVALID_ARGS): The command contains a NUL byte');
  });
});
