import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { openInspector, rawUpgrade, type InspectorSession } from './support.js';

let t: TestApp;
const sessions: InspectorSession[] = [];
beforeAll(async () => { t = await startApp({ env: { SVC_ALLOWED_ORIGINS: 'https://ok.example' } }); });
afterAll(async () => {
  for (const s of sessions) await s.close();
  await t?.close();
});

async function inspector(headers: Record<string, string> = {}): Promise<InspectorSession> {
  const s = await openInspector(t.port, headers);
  sessions.push(s);
  return s;
}

/** Status line, headers and body of one raw answer. */
function parse(rawText: string) {
  const cut = rawText.indexOf('\r\n\r\n');
  const [status, ...lines] = rawText.slice(0, cut).split('\r\n');
  return { status, headers: new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()])), body: rawText.slice(cut + 4) };
}

describe('GET /inspect/ws upgrade guard (behaviour.md §9.2, §13.1)', () => {
  it.each([
    [{ Host: 'evil.example' }, 'Forbidden host: evil.example'],
    [{ Host: '10.0.0.7:3923' }, 'Forbidden host: 10.0.0.7:3923'],
    [{ Host: '127.0.0.1', Origin: 'http://evil.example' }, 'Forbidden origin: http://evil.example'],
    [{ Host: 'localhost', Origin: 'null' }, 'Forbidden origin: null'],
  ])('when the upgrade comes with %j, then 403 {"error": "%s"}, the socket closed and not one WebSocket frame', async (headers, error) => {
    const r = parse(await rawUpgrade(t.port, headers));
    expect(r.status).toBe('HTTP/1.1 403 Forbidden');
    expect(r.headers.has('sec-websocket-accept')).toBe(false);
    expect(r.headers.get('connection')).toBe('close');
    // The whole exchange is one JSON body: no 101 and no frame (a frame would follow the body).
    expect(JSON.parse(r.body)).toEqual({ error });
  });

  it('when a loopback page or an allowed origin connects, then it is upgraded and its first message is the snapshot', async () => {
    for (const origin of [`http://127.0.0.1:${t.port}`, 'https://ok.example']) {
      const s = await inspector({ Origin: origin });
      expect(s.messages[0].type).toBe('snapshot');
      expect(Object.keys(s.messages[0])).toEqual(['type', 'at', 'version', 'uptime_ms', 'agents']);
    }
  });
});

describe('live messages (behaviour.md §13.3)', () => {
  it('when a command runs on a new topic, then the page gets the actor, its transitions and the command phases in order', async () => {
    await call(t.base, 'POST', '/agents', { body: { agent_id: 'ann' } });
    const s = await inspector();
    expect(s.messages[0].agents.map((a: { agent_id: string }) => a.agent_id)).toContain('ann');
    await t.client('ann').exec('live', '/info', 'req-1');
    await s.until((m) => m.type === 'command' && m.phase === 'finished', 'finished');
    await s.until((m) => m.type === 'transition' && m.actor === 'topic:ann/live' && m.to === 'idle', 'transition to idle');
    const mine = s.messages.filter((m) => m.actor === 'topic:ann/live' || m.topic === 'live');
    expect(mine.map((m) => (m.type === 'command' ? `command ${m.phase}` : m.type === 'actor' ? `actor ${m.event}` : `${m.from} -> ${m.to}`))).toEqual([
      'actor created', 'command started', 'idle -> executing', 'command finished', 'executing -> idle',
    ]);
    const created = mine[0];
    expect(created).toEqual({ type: 'actor', actor: 'topic:ann/live', machine: 'topicQueue', event: 'created', at: expect.any(String) });
    expect(mine[2]).toEqual({ type: 'transition', actor: 'topic:ann/live', machine: 'topicQueue', from: 'idle', to: 'executing', event: 'command.arrive', at: expect.any(String) });
    expect(mine[3]).toEqual({
      type: 'command', phase: 'finished', agent_id: 'ann', topic: 'live', ticket: 't1', cmd: '/info', via: 'exec', request_id: 'req-1', ok: true, code: null,
      duration_ms: expect.any(Number), at: expect.any(String),
    });
  });

  it('when a command waits behind another, then queued comes before started, and a deleted agent is reported stopped', async () => {
    await call(t.base, 'POST', '/agents', { body: { agent_id: 'bea' } });
    const s = await inspector();
    const first = t.client('bea').exec('q', '/exec sleep 30');
    await s.until((m) => m.type === 'command' && m.phase === 'started' && m.topic === 'q', 'started');
    const second = t.client('bea').exec('q', '/info');
    await s.until((m) => m.type === 'command' && m.phase === 'queued' && m.ticket === 't2', 'queued');
    await call(t.base, 'DELETE', '/agents/bea');
    await first;
    await second;
    await s.until((m) => m.type === 'actor' && m.actor === 'agent:bea' && m.event === 'stopped', 'agent stopped');
    const finished = s.messages.filter((m) => m.type === 'command' && m.phase === 'finished' && m.agent_id === 'bea');
    expect(finished.map((m) => [m.ticket, m.ok, m.code])).toEqual([['t1', false, 'CONFLICT'], ['t2', false, 'CONFLICT']]);
  });

  it('when a ?coalesce=1 client watches a flood, then it gets every topic\'s last 20 commands and a count of the rest; a plain client gets every message', async () => {
    await call(t.base, 'POST', '/agents', { body: { agent_id: 'flo' } });
    const plain = await inspector();
    const page = await openInspector(t.port, {}, '?coalesce=1');
    sessions.push(page);
    // Two topics, 600 commands each, as fast as four clients per topic can send them.
    const topics = ['f1', 'f2'];
    await Promise.all(topics.flatMap((topic) => Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 150; i++) await t.client('flo').exec(topic, '/info');
    })));
    const mark = await t.client('flo').exec('end', '/info');
    expect(mark.status).toBe(200);
    for (const s of [plain, page]) await s.until((m) => m.type === 'command' && m.phase === 'finished' && m.topic === 'end', 'the last command');
    const finished = (s: InspectorSession, topic: string) => s.messages.filter((m) => m.type === 'command' && m.phase === 'finished' && m.topic === topic).map((m) => m.ticket);
    for (const topic of topics) expect(finished(plain, topic)).toHaveLength(600);
    const notes = page.messages.filter((m) => m.type === 'coalesced');
    expect(notes.length).toBeGreaterThan(0);
    expect(Object.keys(notes[0])).toEqual(['type', 'commands', 'messages', 'at']);
    // Every finished command is either sent or counted as left out, and the last 20 of each topic are sent.
    const sent = topics.map((topic) => finished(page, topic));
    expect(sent[0].length + sent[1].length + notes.reduce((n, m) => n + m.commands, 0)).toBe(1200);
    for (const [i, topic] of topics.entries()) expect(sent[i].slice(-20)).toEqual(finished(plain, topic).slice(-20));
    expect(page.messages.length).toBeLessThan(plain.messages.length / 2);
  }, 60000);
});

describe('redaction over a WebSocket session (behaviour.md §13.4)', () => {
  it('when a session mints a capability, rotates a webhook, posts an event, sets and uses secrets and writes a body, then no message carries any of them', async () => {
    const s = await inspector();
    const reg = await call(t.base, 'POST', '/agents', { body: { agent_id: 'sec', webhook: true } });
    const minted = await call(t.base, 'POST', '/capabilities', { body: { agent_id: 'sec', verbs: ['GET', 'PUT'], ttl_ms: 60000 } });
    const rotated = await call(t.base, 'POST', '/agents/sec/webhook');
    const c = t.client('sec');
    await c.exec('main', '/set $TOKEN = "s3cret-token-4711"');
    await c.exec('main', '/set {v} = "sess-value-77"');
    // The values used in later commands: shown by their names, in messages, tickets and `recent`.
    await c.exec('main', '/exec echo s3cret-token-4711');
    await c.exec('main', '/exec echo sess-value-77');
    await c.exec('main', '/write ~/note.txt\nbody-secret-88\nsecond body line');
    const hook = await fetch(rotated.body.webhook_url, { method: 'POST', body: 'event-text-99' });
    expect(hook.status).toBe(202);
    await c.exec('main', '/events');
    await c.exec('main', '/webhook');
    // A running and a waiting command that hold them, caught by the snapshots.
    await c.exec('slow', '/set {w} = "slow-sess-55"');
    const running = c.exec('slow', '/exec sleep 2; echo s3cret-token-4711 slow-sess-55');
    await s.until((m) => m.type === 'command' && m.phase === 'started' && m.topic === 'slow' && m.ticket === 't2', 'slow started');
    const waiting = c.exec('slow', '/exec echo s3cret-token-4711 queued');
    await s.until((m) => m.type === 'command' && m.phase === 'queued' && m.topic === 'slow', 'slow queued');
    const busy = await call(t.base, 'GET', '/inspect/state');
    const busyPage = await inspector();
    await running;
    await waiting;
    const slow = busy.body.agents.find((a: { agent_id: string }) => a.agent_id === 'sec').topics.find((x: { topic: string }) => x.topic === 'slow');
    expect(slow.running.cmd).toBe('/exec sleep 2; echo ${env:TOKEN} {w}');
    expect(slow.waiting.map((w: { cmd: string }) => w.cmd)).toEqual(['/exec echo ${env:TOKEN} queued']);
    // A second page opened afterwards: its snapshot covers the state these left behind.
    const later = await inspector();
    const state = await call(t.base, 'GET', '/inspect/state');
    await s.until((m) => m.type === 'command' && m.phase === 'finished' && m.cmd === '/webhook', 'last command');
    await call(t.base, 'DELETE', `/capabilities/${minted.body.token_id}`);
    await s.until((m) => m.type === 'actor' && m.actor === `cap:${minted.body.token_id}` && m.event === 'stopped', 'capability stopped');

    const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
    const everything = [...s.raw, ...later.raw, ...busyPage.raw, JSON.stringify(state.body), JSON.stringify(busy.body)];
    const secrets = [
      minted.body.secret, tokenOf(reg.body.webhook_url), tokenOf(rotated.body.webhook_url), '/webhook/',
      's3cret', 'sess-value-77', 'slow-sess-55', 'body-secret-88', 'second body line', 'event-text-99',
    ];
    for (const text of everything) for (const secret of secrets) expect(text).not.toContain(secret);
    // The session itself was seen: masked first lines, the event counted, the capability listed.
    const shown = ['/set $TOKEN = "s3…"', '/set {v} = "se…"', '/exec echo ${env:TOKEN}', '/exec echo {v}', '/write ~/note.txt', '/events', '/webhook'];
    const cmds = s.messages.filter((m) => m.type === 'command' && m.phase === 'finished' && m.agent_id === 'sec' && m.topic === 'main').map((m) => m.cmd);
    expect(cmds).toEqual(shown);
    const recent = state.body.agents.find((a: { agent_id: string }) => a.agent_id === 'sec').topics.find((x: { topic: string }) => x.topic === 'main').recent;
    expect(recent.map((r: { cmd: string }) => r.cmd)).toEqual(shown);
    const sec = later.messages[0].agents.find((a: { agent_id: string }) => a.agent_id === 'sec');
    expect(sec.events).toEqual({ pending: 1, acked: 0, streams: 0 });
    expect(sec.capabilities.map((x: { token_id: string }) => x.token_id)).toContain(minted.body.token_id);
  });
});
