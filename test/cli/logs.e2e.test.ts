import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { CLI, freePort, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { loom } from './support.js';

let d: RunningDaemon;
const logFile = () => join(d.dataDir, 'logs', 'requests.log');
type Entry = Record<string, unknown>;

/** The entries of `loom logs --json -n <n>` once at least `count` are there (the log is written asynchronously). */
async function entries(count: number, n = 1000): Promise<Entry[]> {
  for (let i = 0; i < 100; i++) {
    const r = await loom(d, ['--json', 'logs', '-n', String(n)]);
    const list = (JSON.parse(r.stdout) as { entries: Entry[] }).entries;
    if (list.length >= count) return list;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`fewer than ${count} log entries`);
}

const SECRET_VALUE = 'hunter2-do-not-log';
let webhookToken = '';
let capSecret = '';

beforeAll(async () => {
  d = await startDaemon();
  const c = new LoomClient(d.base, 'leo');
  await c.registerAgent({ agent_id: 'leo' });
  await c.exec('main', `/set $NOTE_TOKEN = "${SECRET_VALUE}"`, 'req-42');
  const url = (await c.webhook('leo')).body.webhook_url;
  webhookToken = url.slice(url.lastIndexOf('/') + 1);
  await fetch(url, { method: 'POST', body: `event body ${SECRET_VALUE}` });
  capSecret = String((await c.mintCapability({ agent_id: 'leo', path_prefix: 'docs', verbs: ['PUT'], ttl_ms: 60_000 })).body.secret);
  await fetch(`${d.base}/fs/docs/x.txt?cap=${capSecret}`, { method: 'PUT', body: `file ${SECRET_VALUE}` });
  await fetch(`${d.base}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Agent-Id': 'leo' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'loom', arguments: { topic: 'notes', cmd: `/exec echo ${SECRET_VALUE}` } } }),
  });
});
afterAll(async () => { await d?.kill(); });

describe('behaviour.md §2.13 the request log', () => {
  it('when requests are served, then each is one JSON line with time, method, path, status, duration, agent, topic, command, request id', async () => {
    const all = await entries(7);
    const exec = all.find((e) => e.path === '/exec');
    expect(exec).toEqual({
      level: 'info', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), method: 'POST', path: '/exec', status: 200,
      duration_ms: expect.any(Number), agent: 'leo', topic: 'main', command: '/set', request_id: 'req-42',
    });
    expect(all.find((e) => e.path === '/agents/leo/webhook')).toMatchObject({ method: 'GET', status: 200, agent: 'leo', topic: null, command: null });
    expect(all.find((e) => e.path === '/mcp')).toMatchObject({ method: 'POST', status: 200, agent: 'leo', topic: 'notes', command: '/exec' });
  });

  it('when a webhook, a ?cap= secret and command arguments pass through, then none of them reaches the log', async () => {
    const all = await entries(7);
    expect(all.find((e) => String(e.path).startsWith('/webhook/'))).toMatchObject({ path: '/webhook/<token>', status: 202 });
    expect(all.find((e) => String(e.path).startsWith('/fs/'))).toMatchObject({ method: 'PUT', path: '/fs/docs/x.txt', status: 201 });
    const text = readFileSync(logFile(), 'utf8');
    for (const secret of [SECRET_VALUE, webhookToken, capSecret, 'NOTE_TOKEN', 'echo']) expect(text).not.toContain(secret);
  });

  it('when loom logs runs, then the recent requests are aligned text; -n limits them', async () => {
    await entries(7);
    const r = await loom(d, ['logs', '-n', '3']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.every((l) => /^\d{4}-\d\d-\d\dT\S+Z {2}[A-Z]+ +\d{3} +\d+ ms +\//.test(l))).toBe(true);
    // Aligned: the path column starts at the same offset on every line.
    expect(new Set(lines.map((l) => l.indexOf(' /'))).size).toBe(1);
    const exec = (await loom(d, ['logs', '-n', '100'])).stdout.split('\n').find((l) => l.includes(' /exec '));
    expect(exec).toMatch(/ POST +200 +\d+ ms +\/exec +leo +main +\/set +\[req-42\]$/);
  });

  it('when loom logs -f runs, then new requests are printed as they arrive', async () => {
    const p = spawn(process.execPath, [CLI, 'logs', '-f', '-n', '0'], { env: { ...process.env, SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    try {
      // Give the follower a moment to take its starting offset, then make requests until one shows.
      await new Promise((r) => setTimeout(r, 400));
      for (let i = 0; i < 60 && !out.includes('/health'); i++) {
        await fetch(`${d.base}/health`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out).toMatch(/ GET {2}200 {2}\d+ ms {2}\/health {2}- {2}- {2}-\n/);
      expect(out).not.toContain('/exec');
    } finally {
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
    }
  });

  it('when no daemon has written a log yet, then logs says so on stderr and exits 0; --json gives no entries', async () => {
    const env = { port: await freePort(), dataDir: tempDir() };
    const r = await loom(env, ['logs']);
    expect(r).toEqual({ code: 0, stdout: '', stderr: `loom: no request log yet (${join(env.dataDir, 'logs', 'requests.log')}); the daemon writes one line per request\n` });
    expect(JSON.parse((await loom(env, ['--json', 'logs'])).stdout)).toEqual({ entries: [] });
  });
});
