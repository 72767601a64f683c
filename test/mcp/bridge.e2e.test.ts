import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { SseEvent } from '../../src/client/index.js';
import { channelParams, forwardEvents, type ChannelParams } from '../../src/cli/mcpChannel.js';
import { call, startApp } from '../helpers/app.js';
import { CLI, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { startFakeDaemon, sse, type FakeDaemon } from './fakeDaemon.js';
import { env, loom } from './helpers.js';

// The event stream route belongs to the events area, built in parallel: the end-to-end channel test
// runs once the route exists (401 for an unknown agent), the fake-daemon tests always run.
const probe = await startApp();
const hasEventStream = (await call(probe.base, 'GET', '/events/stream', { headers: { 'X-Agent-Id': 'nobody' } })).status !== 404;
await probe.close();

async function stdioClient(port: number, args: string[] = [], dataDir = tempDir()): Promise<{ client: Client; notes: Array<{ method: string; params?: unknown }> }> {
  const notes: Array<{ method: string; params?: unknown }> = [];
  const client = new Client({ name: 'loom-bridge-test', version: '0.0.1' });
  client.fallbackNotificationHandler = async (n) => { notes.push({ method: n.method, params: n.params }); };
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--agent', 'ava', ...args],
    env: { ...(process.env as Record<string, string>), SVC_PORT: String(port), SVC_DATA_DIR: dataDir },
    stderr: 'pipe',
  });
  await client.connect(transport);
  return { client, notes };
}

describe('loom mcp status mapping (behaviour.md §10.4)', () => {
  let fake: FakeDaemon;
  let c: Client;
  beforeAll(async () => {
    fake = await startFakeDaemon({
      exec: (req, res, _n) => {
        const cmd = (JSON.parse(fake.seen[fake.seen.length - 1].body) as { cmd: string }).cmd;
        const json = (status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
        if (cmd === '/full') return json(429, { error: 'QUEUE_FULL', message: 'Topic main already has 5 commands waiting.' });
        if (cmd === '/wait') return json(504, { error: 'QUEUE_TIMEOUT', message: 'Waited 120000 ms in the queue of topic main.' });
        if (cmd === '/teapot') return json(418, { error: 'short and stout' });
        const head = { ok: true, code: null, cmd, request_id: null, agent_id: 'ava', topic: 'main', topic_type: 'tab', meta: null };
        if (cmd === '/cut') {
          sse(res, [['head', head]]);
          return void res.end();
        }
        sse(res, [['head', head], ['content', `re: ${cmd}\nfine\n---\nbody`], ['done', {}]]);
        res.end();
      },
    });
    ({ client: c } = await stdioClient(fake.port));
  });
  afterAll(async () => {
    await c.close();
    await fake.close();
  });

  it('when started, then it registers the agent with POST /agents {agent_id} only (no home)', () => {
    const reg = fake.seen.find((r) => r.method === 'POST' && r.path === '/agents');
    expect(JSON.parse(reg?.body ?? '')).toEqual({ agent_id: 'ava' });
  });

  it('when /exec answers 200 with all three events, then the content without its re: line', async () => {
    expect(await loom(c, 'main', '/fine')).toEqual({ content: [{ type: 'text', text: env('main', 'fine\n---\nbody') }], isError: false });
    const sent = fake.seen.filter((r) => r.path === '/exec').pop();
    expect(sent?.agent).toBe('ava');
    expect(JSON.parse(sent?.body ?? '')).toEqual({ cmd: '/fine', topic: 'main' });
  });

  it('when /exec answers 429, then ERROR(QUEUE_FULL): <message>', async () => {
    expect((await loom(c, 'main', '/full')).content[0].text).toBe(env('main', 'ERROR(QUEUE_FULL): Topic main already has 5 commands waiting.'));
  });

  it('when /exec answers 504, then ERROR(QUEUE_TIMEOUT): <message>', async () => {
    expect((await loom(c, 'main', '/wait')).content[0].text).toBe(env('main', 'ERROR(QUEUE_TIMEOUT): Waited 120000 ms in the queue of topic main.'));
  });

  it('when the stream ends without content or done, then ERROR(STREAM_INCOMPLETE)', async () => {
    const r = await loom(c, 'main', '/cut');
    expect(r).toEqual({ content: [{ type: 'text', text: env('main', "ERROR(STREAM_INCOMPLETE): the daemon's answer was cut off") }], isError: true });
  });

  it('when /exec answers another status, then ERROR(INTERNAL_ERROR): daemon answered HTTP <status>: <error>', async () => {
    expect((await loom(c, 'main', '/teapot')).content[0].text).toBe(env('main', 'ERROR(INTERNAL_ERROR): daemon answered HTTP 418: short and stout'));
  });
});

describe('loom mcp --channel (behaviour.md §10.4, spec §6 Emission)', () => {
  const e1 = { id: 'evt_1', agentId: 'ava', receivedAt: '2026-11-22T10:00:00.000Z', source: 'webhook', text: 'first', status: 'pending' };
  const e2 = { id: 'evt_2', agentId: 'ava', receivedAt: '2026-11-22T10:00:05.000Z', source: 'webhook', text: 'second', status: 'pending' };
  let fake: FakeDaemon;
  let c: Client;
  let notes: Array<{ method: string; params?: unknown }>;
  beforeAll(async () => {
    fake = await startFakeDaemon({
      stream: (_req, res, n) => {
        // First connection: one event, then the stream ends (the bridge must reconnect).
        if (n === 1) {
          sse(res, [['ready', { agent_id: 'ava' }], ['ping', { t: 1 }], ['event', e1]]);
          res.end();
          return;
        }
        sse(res, [['ready', { agent_id: 'ava' }], ['event', e2]]);
      },
    });
    ({ client: c, notes } = await stdioClient(fake.port, ['--channel']));
  });
  afterAll(async () => {
    await c.close();
    await fake.close();
  });

  it('when started with --channel, then capabilities.experimental["claude/channel"] is {}', () => {
    expect(c.getServerCapabilities()?.experimental).toEqual({ 'claude/channel': {} });
  });

  it('when events arrive, across a reconnect, then each is one notifications/claude/channel with content and meta', async () => {
    while (notes.length < 2) await new Promise((r) => setTimeout(r, 20));
    expect(notes).toEqual([
      { method: 'notifications/claude/channel', params: { content: 'first', meta: { source: 'loom', agent_id: 'ava', event_id: 'evt_1', received_at: e1.receivedAt } } },
      { method: 'notifications/claude/channel', params: { content: 'second', meta: { source: 'loom', agent_id: 'ava', event_id: 'evt_2', received_at: e2.receivedAt } } },
    ]);
    const streams = fake.seen.filter((r) => r.path === '/events/stream');
    expect(streams.length).toBeGreaterThanOrEqual(2);
    expect(streams.every((r) => r.agent === 'ava')).toBe(true);
  });

  it('when events are forwarded, then nothing acknowledges them (no /exec, no other route)', () => {
    expect(fake.seen.filter((r) => !['/health', '/agents', '/events/stream'].includes(r.path))).toEqual([]);
  });
});

describe('forwardEvents (behaviour.md §10.4 reconnect backoff)', () => {
  /** A stream source from a script: each entry is one connection (an Error = the open fails). */
  function script(conns: Array<Error | SseEvent[]>, stop: AbortController) {
    let i = 0;
    return (_signal: AbortSignal): AsyncIterable<SseEvent> => ({
      async *[Symbol.asyncIterator]() {
        const conn = conns[i++];
        if (i >= conns.length) stop.abort();
        if (conn instanceof Error) throw conn;
        yield* conn;
      },
    });
  }

  it('when connections fail, then the waits double from 1 s to at most 30 s, and reset after a stream opened', async () => {
    const stop = new AbortController();
    const fail = new Error('refused');
    const ok: SseEvent[] = [{ event: 'ready', data: '{"agent_id":"ava"}' }, { event: 'event', data: JSON.stringify({ id: 'e', agentId: 'ava', receivedAt: 'r', source: 's', text: 't', status: 'pending' }) }];
    const waits: number[] = [];
    const sent: ChannelParams[] = [];
    await forwardEvents({
      agentId: 'ava', signal: stop.signal,
      open: script([fail, fail, fail, fail, fail, fail, fail, ok, fail, ok], stop),
      notify: async (p) => { sent.push(p); },
      sleep: async (ms) => { waits.push(ms); },
    });
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 1000, 2000, 1000]);
    expect(sent).toHaveLength(2);
  });

  it('when data is not an event object, then it is skipped', () => {
    expect(channelParams('not json', 'ava')).toBeNull();
    expect(channelParams('{"id":"x"}', 'ava')).toBeNull();
    expect(channelParams('{"id":"x","text":"hi","receivedAt":"r"}', 'ava')).toEqual({ content: 'hi', meta: { source: 'loom', agent_id: 'ava', event_id: 'x', received_at: 'r' } });
  });
});

(hasEventStream ? describe : describe.skip)('loom mcp --channel against the daemon (spec §6 Emission)', () => {
  let d: RunningDaemon;
  beforeAll(async () => { d = await startDaemon(); });
  afterAll(async () => { await d.stop(); });

  it('when a webhook event is posted, then the host gets it as a channel notification', async () => {
    const reg = await call(d.base, 'POST', '/agents', { body: { agent_id: 'ava', webhook: true } });
    const hook = reg.body.webhook_url as string;
    const { client, notes } = await stdioClient(d.port, ['--channel'], d.dataDir);
    // Only events appended after the stream opened are delivered, so post until one comes through.
    const ids = new Map<string, string>();
    for (let i = 0; notes.length === 0; i++) {
      const r = await fetch(hook, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: `hello ${i}` });
      ids.set((await r.json() as { event_id: string }).event_id, `hello ${i}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    const p = notes[0].params as ChannelParams;
    expect(notes[0].method).toBe('notifications/claude/channel');
    expect(p.meta.source).toBe('loom');
    expect(p.meta.agent_id).toBe('ava');
    expect(p.content).toBe(ids.get(p.meta.event_id));
    await client.close();
  });
});
