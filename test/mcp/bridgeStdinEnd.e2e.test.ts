import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { CLI, startDaemon, type RunningDaemon } from '../helpers/daemon.js';

/*
 * behaviour.md §10.4: `loom mcp` serves a host over stdio. A host (or a script) may close stdin
 * right after its last request; a call still running then is answered before the bridge exits.
 */
let d: RunningDaemon;
beforeAll(async () => {
  d = await startDaemon();
});
afterAll(async () => {
  await d?.stop();
});

/** Run `loom mcp` with `lines` on stdin, stdin closed at once; its stdout messages and exit code. */
function piped(lines: unknown[]): Promise<{ code: number | null; messages: Array<{ id?: number; result?: { content: Array<{ text: string }> } }> }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, 'mcp', '--agent', 'pipe'], { env: { ...process.env, SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    p.stdin.end(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const t = setTimeout(() => p.kill('SIGKILL'), 20_000);
    p.on('exit', (code) => {
      clearTimeout(t);
      resolve({ code, messages: out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id?: number }) });
    });
  });
}

describe('loom mcp when stdin ends with a call in flight (behaviour.md §10.4)', () => {
  it('when the last request is a slow tools/call, then its answer is written before the bridge exits 0', async () => {
    const r = await piped([
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '0' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'loom', arguments: { topic: 'main', cmd: '/exec sleep 1; echo finished-$((6*7))' } } },
    ]);
    expect(r.code).toBe(0);
    expect(r.messages.map((m) => m.id)).toEqual([1, 2]);
    expect(r.messages[1].result?.content[0].text).toContain('finished-42');
  });
});
