import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { closeServer, compose, listen } from '../../src/daemon.js';
import { commandWord, logPath, pathAgent, shortLine, type RequestLogEntry } from '../../src/domain/requestLog.js';
import { RequestLogFile } from '../../src/effects/requestLogFile.js';
import { compileMasks } from '../../src/domain/redact.js';
import { maskedEntry } from '../../src/http/requestLog.js';
import { tempDir } from '../helpers/daemon.js';

const entry = (n: number): RequestLogEntry => ({
  time: '2025-06-01T10:00:02.120Z', method: 'POST', path: '/exec', status: 200, duration_ms: n, agent: 'leo', topic: 'main', command: '/open', request_id: `r${n}`,
});

const lines = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []);

describe('request log helpers (behaviour.md §2.13)', () => {
  it('when a path carries a secret, then the log keeps neither the query string nor the webhook token', () => {
    expect(logPath('/fs/docs/a.md?cap=caps_secret')).toBe('/fs/docs/a.md');
    expect(logPath('/webhook/wh_0123456789')).toBe('/webhook/<token>');
    expect(logPath('/webhook/wh_x/extra?y=1')).toBe('/webhook/<token>/extra');
    expect(logPath('/agents/leo/webhook')).toBe('/agents/leo/webhook');
  });

  it('when a command has arguments, then only its word is kept (lower-cased, dotted part included)', () => {
    expect(commandWord('  /OPEN ~/secret-plan.md')).toBe('/open');
    expect(commandWord('/set $TOKEN = "s3cret"\nbody')).toBe('/set');
    expect(commandWord('/events.read evt_1')).toBe('/events.read');
    expect(commandWord('no slash')).toBeNull();
    expect(commandWord(42)).toBeNull();
    expect(commandWord(`/${'x'.repeat(500)}`)).toHaveLength(80);
    // The limit counts characters, not UTF-16 units: 80 of them kept whole, a longer word cut at 80.
    expect(commandWord(`/${'😀'.repeat(79)} arg`)).toBe(`/${'😀'.repeat(79)}`);
    expect([...(commandWord(`/${'😀'.repeat(100)}`) as string)]).toHaveLength(80);
    expect(commandWord(`/${'x'.repeat(79)}`)).toBe(`/${'x'.repeat(79)}`);
  });

  it('when the path names an agent, then it is the agent; the short line reads like a terminal log', () => {
    expect(pathAgent('/agents/le%20o/webhook')).toBe('le o');
    expect(pathAgent('/agents/%E0%A4/x')).toBe('%E0%A4');
    expect(pathAgent('/exec')).toBeNull();
    expect(shortLine(entry(3))).toBe('10:00:02 POST /exec 200 3 ms leo main /open [r3]');
    expect(shortLine({ ...entry(1), agent: null, topic: null, command: null, request_id: null, method: 'GET', path: '/health' })).toBe('10:00:02 GET /health 200 1 ms');
  });
});

describe('RequestLogFile (behaviour.md §2.13: rotated at 10 MiB, 3 files kept)', () => {
  it('when an entry is written, then its line holds level, the entry\'s own time and every field, in that order', async () => {
    const dir = tempDir();
    const log = new RequestLogFile(dir);
    log.write({ ...entry(7), topic: null, command: null });
    await log.close();
    const text = readFileSync(join(dir, 'requests.log'), 'utf8');
    expect(text).toBe('{"level":"info","time":"2025-06-01T10:00:02.120Z","method":"POST","path":"/exec","status":200,"duration_ms":7,"agent":"leo","topic":null,"command":null,"request_id":"r7"}\n');
  });

  it('when a client-chosen field holds a secret or a masked value, then the written entry masks it and keeps the daemon\'s own fields', () => {
    const masks = compileMasks([['hunter2-value-xyz', '{PW}']]);
    const e = maskedEntry({ ...entry(3), agent: 'leo', topic: 'hunter2-value-xyz', request_id: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789' }, masks);
    expect(Object.keys(e)).toEqual(['time', 'method', 'path', 'status', 'duration_ms', 'agent', 'topic', 'command', 'request_id']);
    expect(e.topic).toBe('{PW}');
    expect(e.request_id).not.toContain('abcdefghijklmnopqrstuvwxyz');
    expect([e.time, e.method, e.path, e.status, e.duration_ms, e.agent, e.command]).toEqual(['2025-06-01T10:00:02.120Z', 'POST', '/exec', 200, 3, 'leo', '/open']);
    expect(maskedEntry({ ...entry(4), agent: null, topic: null, command: null, request_id: null }, null)).toEqual({ ...entry(4), agent: null, topic: null, command: null, request_id: null });
  });

  it('when the size limit is passed, then the files shift, the oldest is dropped, and every line is whole JSON', async () => {
    const dir = tempDir();
    const log = new RequestLogFile(dir, { maxBytes: 600 });
    for (let i = 0; i < 40; i++) {
      log.write(entry(i));
      // Let sonic-boom write in between, as requests do.
      if (i % 5 === 4) await new Promise((r) => setTimeout(r, 5));
    }
    await log.close();
    const f = join(dir, 'requests.log');
    expect(existsSync(`${f}.1`)).toBe(true);
    expect(existsSync(`${f}.2`)).toBe(true);
    expect(existsSync(`${f}.3`)).toBe(false);
    const kept = [...lines(`${f}.2`), ...lines(`${f}.1`), ...lines(f)].map((e) => e.duration_ms as number);
    // Oldest first, contiguous, ending with the last write; the earliest ones were dropped.
    expect(kept.at(-1)).toBe(39);
    expect(kept[0]).toBeGreaterThan(0);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => kept[0] + i));
    expect(lines(f).every((e) => e.level === 'info' && typeof e.time === 'string' && e.request_id !== undefined)).toBe(true);
  });

  it('when the daemon restarts, then the size of the existing file counts towards the limit', async () => {
    const dir = tempDir();
    const first = new RequestLogFile(dir, { maxBytes: 400 });
    for (let i = 0; i < 2; i++) first.write(entry(i));
    await first.close();
    const second = new RequestLogFile(dir, { maxBytes: 400 });
    for (let i = 2; i < 4; i++) second.write(entry(i));
    await second.close();
    // 2 entries of the first run + 1 pass the limit: the first rotation keeps the first run's entries in .1.
    const rotated = lines(join(dir, 'requests.log.1')).map((e) => e.duration_ms);
    expect(rotated.slice(0, 2)).toEqual([0, 1]);
    expect([...rotated, ...lines(join(dir, 'requests.log')).map((e) => e.duration_ms)]).toEqual([0, 1, 2, 3]);
  });

  it('when written after close, then nothing is written and nothing throws', async () => {
    const dir = tempDir();
    const log = new RequestLogFile(dir);
    await log.close();
    expect(() => log.write(entry(1))).not.toThrow();
    expect(lines(join(dir, 'requests.log'))).toEqual([]);
  });
});

describe('request log in the daemon (behaviour.md §2.13)', () => {
  it('when the daemon is composed with an echo, then every request — /fs fast path included — is echoed and written', async () => {
    const dataDir = tempDir();
    const echoed: RequestLogEntry[] = [];
    const c = await compose(loadConfig({ SVC_DATA_DIR: dataDir, SVC_PORT: '1' }), { memory: true, requestLog: { echo: (e) => echoed.push(e) } });
    const server = await listen(c, 0);
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      await fetch(`${base}/health`);
      await fetch(`${base}/fs/a.txt?cap=caps_nope`, { method: 'PUT', body: 'x' });
      await fetch(`${base}/nowhere`);
      await fetch(`${base}/agents`, { method: 'POST', body: '{"agent_id":"logged"}' });
      await (await fetch(`${base}/exec?x=1`, { method: 'POST', headers: { 'X-Agent-Id': 'logged' }, body: '{"cmd":"/help","topic":"main","request_id":"q1"}' })).text();
      for (let i = 0; i < 50 && echoed.length < 5; i++) await new Promise((r) => setTimeout(r, 10));
      expect(echoed.map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual(['GET /health 200', 'PUT /fs/a.txt 401', 'GET /nowhere 404', 'POST /agents 200', 'POST /exec 200']);
      // The /exec fast path notes what the route parsed.
      expect(echoed[4]).toMatchObject({ agent: 'logged', topic: 'main', command: '/help', request_id: 'q1' });
    } finally {
      await c.system.shutdown();
      await closeServer(server);
    }
    // Closing the server flushed and closed the file.
    for (let i = 0; i < 50 && lines(join(dataDir, 'logs', 'requests.log')).length < 5; i++) await new Promise((r) => setTimeout(r, 10));
    expect(lines(join(dataDir, 'logs', 'requests.log')).map((e) => e.path)).toEqual(['/health', '/fs/a.txt', '/nowhere', '/agents', '/exec']);
  });

  it('when the request log is off, then no log folder is made', async () => {
    const dataDir = tempDir();
    const c = await compose(loadConfig({ SVC_DATA_DIR: dataDir, SVC_PORT: '1' }), { memory: true, requestLog: false });
    const server = await listen(c, 0);
    await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/health`);
    await c.system.shutdown();
    await closeServer(server);
    expect(existsSync(join(dataDir, 'logs'))).toBe(false);
  });
});
