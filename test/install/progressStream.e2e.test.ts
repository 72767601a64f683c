import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { LoomClient, type InstallJson, type SseEvent } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { manifest, send, startFileServer, writeTree, type FileServer } from './support.js';

/*
 * GET /installs/stream (beyond spec; docs/install.md): the install progress of an agent as SSE,
 * against the built daemon. `ready` first, then an `install` event at each change of a running
 * install, its end included; `?request_id=` keeps one command's install.
 */

let d: RunningDaemon;
let srv: FileServer;
let home: string;
const FILES = 5;

beforeAll(async () => {
  d = await startDaemon();
  home = String((await new LoomClient(d.base).registerAgent({ agent_id: 'leo' })).body.home);
  srv = await startFileServer();
  // Each file answered after 100 ms: the install runs long enough for several progress changes.
  const entries = Array.from({ length: FILES }, (_, i) => ({ path: i === 0 ? 'string.md' : `p${i}.md`, url: srv.url(`/f/${i}.md`) }));
  srv.routes.set('/pkg.json', send(manifest(entries)));
  for (let i = 0; i < FILES; i++) {
    const body = send(`# Page ${i}\n`);
    srv.routes.set(`/f/${i}.md`, (req, res) => { setTimeout(() => body(req, res), 100); });
  }
  writeTree(join(home, 'apps/notes'), { 'string.md': '---\nname: notes\n---\n# Notes\n' });
});
afterAll(async () => {
  await d?.kill();
  await srv?.close();
});

/** Read a stream's events into `into` until it ends or `abort` fires. */
function collect(stream: AsyncGenerator<SseEvent>, into: SseEvent[]): Promise<void> {
  return (async () => {
    try {
      for await (const e of stream) into.push(e);
    } catch {
      // Aborted by the test.
    }
  })();
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

const installs = (events: SseEvent[]): InstallJson[] => events.filter((e) => e.event === 'install').map((e) => JSON.parse(e.data) as InstallJson);

describe('GET /installs/stream (beyond spec)', () => {
  it('when X-Agent-Id is missing or unknown, then 400 and 401 with the /exec texts', async () => {
    const none = await fetch(`${d.base}/installs/stream`);
    expect(none.status).toBe(400);
    expect(await none.json()).toEqual({ error: 'X-Agent-Id header required' });
    const ghost = await fetch(`${d.base}/installs/stream`, { headers: { 'X-Agent-Id': 'ghost' } });
    expect(ghost.status).toBe(401);
    expect(await ghost.json()).toEqual({ error: 'Unknown agent: ghost' });
  });

  it('when a stream opens, then it is SSE and its first event is ready with the agent id', async () => {
    const ac = new AbortController();
    const res = await fetch(`${d.base}/installs/stream`, { headers: { 'X-Agent-Id': 'leo' }, signal: ac.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe('event: ready\ndata: {"agent_id":"leo"}\n\n');
    ac.abort();
  });

  it('when an install runs, then each change arrives, files count up and the last event says installed', async () => {
    const c = new LoomClient(d.base, 'leo');
    const ac = new AbortController();
    const mine: SseEvent[] = [];
    const all: SseEvent[] = [];
    const done = collect(c.installStream('r-slow', ac.signal), mine);
    const doneAll = collect(c.installStream(undefined, ac.signal), all);
    await until(() => mine.length > 0 && all.length > 0, 'ready');
    expect(mine[0].event).toBe('ready');

    const slow = await c.exec('app', `/install ${srv.url('/pkg.json')} --as slow`, 'r-slow');
    expect(slow.body).toContain('Installed app:slow');
    const other = await c.exec('app', '/install ~/apps/notes', 'r-notes');
    expect(other.body).toContain('Installed app:notes');
    await until(() => installs(all).some((p) => p.request_id === 'r-notes' && p.state === 'installed'), 'the second install to end');
    ac.abort();
    await Promise.all([done, doneAll]);

    const seen = installs(mine);
    // Only the install of that request: the other one is not on this stream.
    expect(seen.every((p) => p.request_id === 'r-slow')).toBe(true);
    expect(seen[0]).toMatchObject({ state: 'staging', files_done: 0 });
    expect(seen.at(-1)).toMatchObject({ name: 'slow', state: 'installed', files_done: FILES, files_total: FILES, request_id: 'r-slow' });
    expect(seen.length).toBeGreaterThanOrEqual(FILES + 1);
    const done_ = seen.map((p) => p.files_done);
    expect(done_).toEqual([...done_].sort((a, b) => a - b));
    // No two events alike: an event means a change.
    expect(new Set(seen.map((p) => JSON.stringify(p))).size).toBe(seen.length);
    // The unfiltered stream has both installs.
    expect(new Set(installs(all).map((p) => p.request_id))).toEqual(new Set(['r-slow', 'r-notes']));
  });

  it('when an install fails, then its last event says aborted', async () => {
    const c = new LoomClient(d.base, 'leo');
    srv.routes.set('/bad.json', send(manifest([{ path: '../escape.md', url: srv.url('/f/0.md') }, { path: 'string.md', url: srv.url('/f/0.md') }])));
    const ac = new AbortController();
    const events: SseEvent[] = [];
    const done = collect(c.installStream('r-bad', ac.signal), events);
    await until(() => events.length > 0, 'ready');
    const r = await c.exec('app', `/install ${srv.url('/bad.json')} --as bad`, 'r-bad');
    expect(r.head?.code).toBe('INSTALL_FAILED');
    await until(() => installs(events).some((p) => p.state !== 'staging'), 'the end of the install');
    ac.abort();
    await done;
    expect(installs(events).at(-1)).toMatchObject({ state: 'aborted', request_id: 'r-bad' });
  });

  it('when an agent has 16 open streams, then the 17th gets 429 and the others stay open', async () => {
    await new LoomClient(d.base).registerAgent({ agent_id: 'many' });
    const ac = new AbortController();
    const opened = await Promise.all(Array.from({ length: 16 }, () => fetch(`${d.base}/installs/stream`, { headers: { 'X-Agent-Id': 'many' }, signal: ac.signal })));
    expect(opened.map((r) => r.status)).toEqual(Array(16).fill(200));
    const extra = await fetch(`${d.base}/installs/stream`, { headers: { 'X-Agent-Id': 'many' } });
    expect(extra.status).toBe(429);
    expect(await extra.json()).toEqual({ error: 'Too many install streams for agent many (max 16)' });
    ac.abort();
  });

  it('when the agent is deleted, then its open stream ends', async () => {
    await new LoomClient(d.base).registerAgent({ agent_id: 'gone' });
    const events: SseEvent[] = [];
    const ended = collect(new LoomClient(d.base, 'gone').installStream(), events);
    await until(() => events.length > 0, 'ready');
    const del = await fetch(`${d.base}/agents/gone`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    await ended;
    expect(events.map((e) => e.event)).toEqual(['ready']);
  });
});
