import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

/*
 * The 0.1-era client's flow on the user wire (spec §9; behaviour.md §11): ensure the user with its
 * home, open a session, run commands in `file:notes` and `app:weather:seoul`, then the user-wire
 * queue: 16 waiting, the 17th refused with 429, a waiting command dropped with 504 after 60000 ms of
 * a simulated clock.
 */

let t: TestApp;
let weather: Server;
let weatherPort = 0;
const home = join(tempDir(), 'ann-home');
const clock = new SimulatedClock();

beforeAll(async () => {
  clock.set(Date.now());
  t = await startApp({ clock, memory: false, env: { SVC_WIRE: 'user' } });
  // A loopback stand-in for the weather service the document calls (tests never leave 127.0.0.1).
  weather = createServer((req, res) => {
    res.setHeader('Content-Type', 'text/plain');
    res.end(`${decodeURIComponent((req.url ?? '').split('/').pop() ?? '')}: sunny, 21 °C`);
  });
  await new Promise<void>((resolve) => weather.listen(0, '127.0.0.1', resolve));
  weatherPort = (weather.address() as { port: number }).port;
});
afterAll(async () => {
  await t?.close();
  await new Promise<void>((resolve) => (weather ? weather.close(() => resolve()) : resolve()));
});

const user = () => t.client('ann');

describe('the 0.1-era flow', () => {
  it('ensures the user with {user_id, home, allowed_paths} (twice: idempotent)', async () => {
    const extra = tempDir();
    const first = await call(t.base, 'POST', '/users', { body: { user_id: 'ann', home, allowed_paths: [extra] } });
    expect(first).toMatchObject({ status: 200, body: { user_id: 'ann', home, created: true } });
    const again = await call(t.base, 'POST', '/users', { body: { user_id: 'ann', home, allowed_paths: [extra] } });
    expect(again.body).toEqual({ user_id: 'ann', home, created: false });
  });

  it('opens a session with POST /sessions {user_id, topic}', async () => {
    const r = await call(t.base, 'POST', '/sessions', { body: { user_id: 'ann', topic: 'file:notes' } });
    expect(r.body).toEqual({ user_id: 'ann', topic: 'file:notes', topic_type: 'file', created: true });
  });

  it('writes, opens and edits a note in file:notes', async () => {
    const w = await user().exec('file:notes', '/write ~/notes.md\n# Notes\n\n- call Leo', 'w1');
    expect(w.head).toMatchObject({ ok: true, request_id: 'w1', user_id: 'ann', topic: 'file:notes', topic_type: 'file' });
    expect(w.body).toBe('Created ~/notes.md (19 bytes, 3 lines)');
    const o = await user().exec('file:notes', '/open ~/notes.md');
    expect(o.head?.meta).toEqual({ uri: `file://${home}/notes.md`, title: 'Notes', current_block: null });
    expect(o.body).toContain('- call Leo');
    const a = await user().exec('file:notes', '/append ~/notes.md\n- buy milk');
    expect(a.head?.ok).toBe(true);
    const s = await call(t.base, 'GET', '/sessions?user_id=ann');
    expect(s.body.sessions).toEqual([{ user_id: 'ann', topic: 'file:notes', topic_type: 'file', executing: false, queue_length: 0, doc: { uri: `file://${home}/notes.md`, title: 'Notes', current_block: null } }]);
  });

  it('runs a weather document with a per-config $CITY in app:weather:seoul', async () => {
    writeFileSync(join(home, 'weather.md'), [
      '---', 'title: Weather', 'default: now', '---', '# Weather', '',
      '```act.now', `GET http://127.0.0.1:${weatherPort}/weather/{city}`, '  city: string "City name" = "$CITY"', '```', '',
    ].join('\n'));
    const set = await user().exec('app:weather:seoul', '/set $CITY = "seoul"');
    expect(set.head).toMatchObject({ ok: true, topic: 'app:weather:seoul', topic_type: 'app' });
    const open = await user().exec('app:weather:seoul', '/open ~/weather.md');
    expect(open.head).toMatchObject({ ok: true, user_id: 'ann', meta: { uri: `file://${home}/weather.md`, title: 'Weather', current_block: null } });
    expect(open.body?.endsWith('seoul: sunny, 21 °C')).toBe(true);
    expect((await user().exec('app:weather:seoul', '/act.now --city busan')).body).toBe('busan: sunny, 21 °C');
    const info = await user().exec('app:weather:seoul', '/info');
    expect(info.body).toMatch(/^Session app:weather:seoul\n---\nuser:      ann\ntype:      app \(package weather, config seoul\)\n/);
    // The config scope is the user's, under <data>/users/ann/state (behaviour.md §11).
    expect((await user().exec('app:weather:tokyo', '/set')).body).not.toContain('seoul');
  });
});

describe('CLI actions on the user wire', () => {
  it('run in the user home with LOOM_USER_ID (no LOOM_AGENT_ID)', async () => {
    writeFileSync(join(home, 'who.md'), ['# Who', '', '```act.who', 'CLI printenv LOOM_USER_ID HOME; printenv LOOM_AGENT_ID || echo no-agent-id', '```', ''].join('\n'));
    expect((await user().exec('file:who', '/open ~/who.md')).head?.ok).toBe(true);
    const r = await user().exec('file:who', '/act.who');
    expect(r.head).toMatchObject({ ok: true, user_id: 'ann' });
    expect(r.body).toBe(`ann\n${home}\nno-agent-id`);
  });
});

/** Start `/exec sleep` on a topic and resolve when its 200 headers arrive. */
function startLong(topic: string): Promise<{ done: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/exec', headers: { 'X-User-Id': 'ann', 'Content-Type': 'application/json' } }, (res) => {
      let body = '';
      const done = new Promise<string>((r) => res.on('end', () => r(body)));
      res.on('data', (c: Buffer) => { body += c.toString(); });
      resolve({ done });
    });
    req.on('error', reject);
    req.end(JSON.stringify({ cmd: '/exec sleep 30', topic }));
  });
}

const sessionOf = async (topic: string) => (await call(t.base, 'GET', '/sessions?user_id=ann')).body.sessions.find((s: { topic: string }) => s.topic === topic);

describe('the user-wire queue: 16 waiting, 60000 ms', () => {
  it('when 16 commands wait, then the 17th gets 429 with the user-wire body; after 60000 ms the waiting ones get 504', async () => {
    const long = await startLong('file:q');
    const waiting = Array.from({ length: 16 }, (_, i) => user().exec('file:q', `/set {n} = "${i}"`));
    while ((await sessionOf('file:q')).queue_length < 16) await new Promise((r) => setTimeout(r, 10));
    expect(await sessionOf('file:q')).toMatchObject({ executing: true, queue_length: 16 });
    const seventeenth = await user().exec('file:q', '/help');
    expect(seventeenth.status).toBe(429);
    expect(seventeenth.error).toEqual({ error: 'QUEUE_FULL', message: 'Topic file:q already has 16 commands waiting.' });
    // One millisecond short of the wait, nothing has expired.
    clock.increment(59999);
    await new Promise((r) => setTimeout(r, 20));
    expect((await sessionOf('file:q')).queue_length).toBe(16);
    clock.increment(1);
    for (const w of await Promise.all(waiting)) {
      expect(w.status).toBe(504);
      expect(w.error).toEqual({ error: 'QUEUE_TIMEOUT', message: 'Waited 60000 ms in the queue of topic file:q.' });
    }
    expect((await sessionOf('file:q')).queue_length).toBe(0);
    await call(t.base, 'DELETE', '/sessions/ann/file:q');
    expect(await long.done).toContain('ERROR(CONFLICT): Topic file:q was closed while this command ran');
  });

  it('when the user is deleted while commands wait, then they are answered CONFLICT naming the user', async () => {
    await call(t.base, 'POST', '/users', { body: { id: 'tmp', home: join(tempDir(), 'tmp') } });
    const long = await new Promise<{ done: Promise<string> }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/exec', headers: { 'X-User-Id': 'tmp', 'Content-Type': 'application/json' } }, (res) => {
        let body = '';
        const done = new Promise<string>((r) => res.on('end', () => r(body)));
        res.on('data', (c: Buffer) => { body += c.toString(); });
        resolve({ done });
      });
      req.on('error', reject);
      req.end(JSON.stringify({ cmd: '/exec sleep 30', topic: 'web:w' }));
    });
    const queued = t.client('tmp').exec('web:w', '/help');
    while (((await call(t.base, 'GET', '/sessions?user_id=tmp')).body.sessions[0]?.queue_length ?? 0) < 1) await new Promise((r) => setTimeout(r, 10));
    expect((await call(t.base, 'DELETE', '/users/tmp')).body).toEqual({ user_id: 'tmp', deleted: true, disposed_sessions: 1 });
    expect((await queued).body).toBe('ERROR(CONFLICT): User tmp was deleted while this command waited');
    expect(await long.done).toContain('ERROR(CONFLICT): Topic web:w was closed while this command ran');
  });
});
