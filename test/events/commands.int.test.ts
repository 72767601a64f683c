import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LoomClient } from '../../src/client/index.js';
import { eventPreview } from '../../src/domain/events.js';
import { call, startApp, type TestApp } from '../helpers/app.js';
import { ManualClock, agentWithWebhook, postWebhook } from './helpers.js';

let app: TestApp;
const clock = new ManualClock();
beforeAll(async () => { app = await startApp({ clock }); });
afterAll(async () => { await app.close(); });

const run = async (c: LoomClient, cmd: string, topic = 'main') => {
  const r = await c.exec(topic, cmd);
  return { ok: r.head?.ok, code: r.head?.code, body: r.body ?? '' };
};

/** A fresh agent with a webhook; `post` adds events one clock second apart. */
async function fresh(id: string) {
  const hook = await agentWithWebhook(app.base, id);
  const c = app.client(id);
  const post = async (text: string) => {
    clock.advance(1000);
    const r = await postWebhook(app.base, hook.path, text);
    expect(r.status).toBe(202);
    return { id: r.body.event_id as string, at: new Date(clock.now()).toISOString() };
  };
  return { ...hook, c, post };
}

describe('/events listing (behaviour.md §2.10)', () => {
  it('when two events are pending, then /events prints the exact page, newest first', async () => {
    const { c, post } = await fresh('leo');
    const a = await post('Build failed on main: see logs');
    const b = await post('Review PR #31 please');
    const r = await run(c, '/events');
    expect(r.ok).toBe(true);
    expect(r.body).toBe([
      'Event inbox of leo — 2 pending (newest first)',
      '---',
      `  ${b.id}  pending  ${b.at}  Review PR #31 please`,
      `  ${a.id}  pending  ${a.at}  Build failed on main: see logs`,
      'next: /events.read <id> · /events.ack <id>',
    ].join('\n'));
    expect((await run(c, '/events list')).body).toBe(r.body);
  });

  it('when some events are acked, then /events hides them and --all shows both with counts and a padded status column', async () => {
    const { c, post } = await fresh('all1');
    const a = await post('first');
    const b = await post('second');
    await run(c, `/events.ack ${a.id}`);
    expect((await run(c, '/events')).body).toBe(['Event inbox of all1 — 1 pending (newest first)', '---', `  ${b.id}  pending  ${b.at}  second`, 'next: /events.read <id> · /events.ack <id>'].join('\n'));
    const all = [
      'Event inbox of all1 — 2 events (1 pending, 1 acked; newest first)',
      '---',
      `  ${b.id}  pending  ${b.at}  second`,
      `  ${a.id}  acked    ${a.at}  first`,
      'next: /events.read <id> · /events.ack <id>',
    ].join('\n');
    expect((await run(c, '/events list --all')).body).toBe(all);
    expect((await run(c, '/events --all')).body).toBe(all);
  });

  it('when the inbox is empty, then "(no events)" and no next: line', async () => {
    const { c } = await fresh('empty');
    expect((await run(c, '/events')).body).toBe('Event inbox of empty — 0 pending (newest first)\n---\n  (no events)');
    expect((await run(c, '/events --all')).body).toBe('Event inbox of empty — 0 events (0 pending, 0 acked; newest first)\n---\n  (no events)');
  });

  it('when more than 100 events match, then the newest 100 are shown and a line counts the rest', async () => {
    const { c, post } = await fresh('many');
    const ids: string[] = [];
    for (let i = 0; i < 103; i++) ids.push((await post(`event ${i}`)).id);
    const lines = (await run(c, '/events')).body.split('\n');
    expect(lines[0]).toBe('Event inbox of many — 103 pending (newest first)');
    expect(lines.length).toBe(2 + 100 + 2);
    expect(lines[2]).toContain(ids[102]);
    expect(lines[101]).toContain(ids[3]);
    expect(lines[102]).toBe('  … 3 older events not shown');
    expect(lines[103]).toBe('next: /events.read <id> · /events.ack <id>');
  });

  it.each([
    ['\n\n   Deploy   finished\t\tok  \nsecond line', 'Deploy finished ok…'],
    ['one line\n\n  \n', 'one line'],
    ['z'.repeat(79) + '\nmore', 'z'.repeat(79) + '…'],
    ['z'.repeat(80) + '\nmore', 'z'.repeat(79) + '…'],
    ['x'.repeat(80), 'x'.repeat(80)],
    ['y'.repeat(81), 'y'.repeat(79) + '…'],
    ['😀'.repeat(81), '😀'.repeat(79) + '…'],
  ])('when the text is %j, then the preview is %j', (text, preview) => {
    expect(eventPreview(text)).toBe(preview);
  });

  it.each(['/events list --bogus', '/events extra', '/events --all --all'])('when /events gets %p, then INVALID_ARGS with the usage', async (cmd) => {
    await agentWithWebhook(app.base, 'usage');
    const r = await run(app.client('usage'), cmd);
    expect(r).toEqual({ ok: false, code: 'INVALID_ARGS', body: 'ERROR(INVALID_ARGS): Usage: /events [list] [--all]' });
  });
});

describe('/events.read, /events.ack, /events.clear (behaviour.md §2.10)', () => {
  it('when a pending event is read, then the full text is shown verbatim with next: /events.ack and it stays pending', async () => {
    const { c, post } = await fresh('reader');
    const text = 'Line one\n\n  indented line\nlast';
    const e = await post(text);
    const expected = [`Event ${e.id}`, '---', `received: ${e.at}`, 'source: local-webhook', 'status: pending', '', text, '', `next: /events.ack ${e.id}`].join('\n');
    expect((await run(c, `/events.read ${e.id}`)).body).toBe(expected);
    expect((await run(c, `/events.read ${e.id}`)).body).toBe(expected);
    expect((await run(c, `/events.ack ${e.id}`)).body).toBe(`Acked ${e.id}`);
    expect((await run(c, `/events.read ${e.id}`)).body).toBe([`Event ${e.id}`, '---', `received: ${e.at}`, 'source: local-webhook', 'status: acked', '', text].join('\n'));
  });

  it.each([
    ['/events.read', 'INVALID_ARGS', 'Usage: /events.read <id>'],
    ['/events.read a b', 'INVALID_ARGS', 'Usage: /events.read <id>'],
    ['/events.read evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2', 'NOT_FOUND', 'Event not found: evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2'],
    ['/events.read nonsense', 'NOT_FOUND', 'Event not found: nonsense'],
    ['/events.ack evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2', 'NOT_FOUND', 'Event not found: evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2'],
    ['/events.ack', 'INVALID_ARGS', 'Usage: /events.ack <id> [<id>…] | /events.ack --all'],
    ['/events.clear --bogus', 'INVALID_ARGS', 'Usage: /events.clear [--all]'],
    ['/events.frob', 'COMMAND_UNSUPPORTED', 'Unknown events command: /events.frob'],
    ['/events.list', 'COMMAND_UNSUPPORTED', 'Unknown events command: /events.list'],
    ['/webhook bogus', 'INVALID_ARGS', 'Usage: /webhook [show|rotate]'],
    ['/webhook show extra', 'INVALID_ARGS', 'Usage: /webhook [show|rotate]'],
  ])('when %p runs, then ERROR(%s): %s', async (cmd, code, message) => {
    await agentWithWebhook(app.base, 'errs');
    expect(await run(app.client('errs'), cmd)).toEqual({ ok: false, code, body: `ERROR(${code}): ${message}` });
  });

  it('when several ids are acked and one is unknown, then NOT_FOUND and nothing changes', async () => {
    const { c, post } = await fresh('acker');
    const a = await post('a');
    const r = await run(c, `/events.ack ${a.id} evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2`);
    expect(r.body).toBe('ERROR(NOT_FOUND): Event not found: evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2');
    expect((await run(c, `/events.read ${a.id}`)).body).toContain('status: pending');
  });

  it('when ids are acked one, again, several and --all, then the confirmation lines of §2.10', async () => {
    const { c, post } = await fresh('acks');
    const [a, b] = [await post('a'), await post('b')];
    await post('c');
    await post('d');
    expect((await run(c, `/events.ack ${a.id}`)).body).toBe(`Acked ${a.id}`);
    expect((await run(c, `/events.ack ${a.id}`)).body).toBe(`Acked ${a.id} (already acked)`);
    expect((await run(c, `/events.ack ${a.id} ${b.id}`)).body).toBe('Acked 2 events');
    expect((await run(c, '/events.ack --all')).body).toBe('Acked 2 events');
    expect((await run(c, '/events')).body).toContain('— 0 pending');
    expect((await run(c, '/events.ack --all')).body).toBe('Acked 0 events');
    const e = await post('e');
    await post('f');
    expect((await run(c, `/events.ack ${e.id} ${e.id}`)).body).toBe(`Acked ${e.id}`);
    expect((await run(c, '/events.ack --all')).body).toBe('Acked 1 event');
    expect((await run(c, '/events --all')).body).toContain('— 6 events (0 pending, 6 acked;');
    await run(c, '/events.clear');
    await post('g');
    expect((await run(c, '/events --all')).body).toContain('— 1 event (1 pending, 0 acked;');
    expect((await run(c, '/events.clear --all')).body).toBe('Cleared 1 event');
  });

  it('when /events.clear runs, then only acked events go; --all removes the rest', async () => {
    const { c, post } = await fresh('clr');
    const a = await post('a');
    await post('b');
    await post('c');
    await run(c, `/events.ack ${a.id}`);
    expect((await run(c, '/events.clear')).body).toBe('Cleared 1 acked event');
    expect((await run(c, '/events.clear')).body).toBe('Cleared 0 acked events');
    expect((await run(c, '/events --all')).body).toContain('— 2 events (2 pending, 0 acked;');
    expect((await run(c, '/events.clear --all')).body).toBe('Cleared 2 events');
    expect((await run(c, '/events --all')).body).toContain('  (no events)');
  });

  it('when /events --help runs, then the six forms are listed with one-line descriptions', async () => {
    await agentWithWebhook(app.base, 'helper');
    const r = await run(app.client('helper'), '/events --help');
    expect(r.body).toBe([
      'Event commands',
      '---',
      '/events              list pending events, newest first',
      '/events list --all   list pending and acked events',
      '/events.read <id>    show one event in full (reading never acknowledges)',
      '/events.ack <id>     acknowledge events: one or more ids, or --all',
      '/events.clear        delete the acked events',
      '/events.clear --all  delete all events, pending ones too',
    ].join('\n'));
  });

  it('when an event command gets a body, then INVALID_ARGS (behaviour.md §2.1 item 7)', async () => {
    await agentWithWebhook(app.base, 'bodied');
    expect((await run(app.client('bodied'), '/events\nmore')).body).toBe('ERROR(INVALID_ARGS): /events does not take a body (text after the first line)');
  });
});

describe('/webhook (behaviour.md §2.10)', () => {
  it('when /webhook runs without a token yet, then it creates one and prints the page; show prints the same', async () => {
    await call(app.base, 'POST', '/agents', { body: { agent_id: 'wh' } });
    const c = app.client('wh');
    const r = await run(c, '/webhook');
    const url = (await call(app.base, 'GET', '/agents/wh/webhook')).body.webhook_url as string;
    expect(r.body).toBe([
      "Local webhook for agent 'wh'",
      '---',
      url,
      `Post text to it: curl -X POST --data-binary @message.txt '${url}'`,
      'Rotate: /webhook rotate',
    ].join('\n'));
    expect((await run(c, '/webhook show')).body).toBe(r.body);
  });

  it('when /webhook rotate runs, then the new URL is printed and the old one answers 401', async () => {
    const { c, path, url } = await fresh('rot');
    const r = await run(c, '/webhook rotate');
    const now = (await call(app.base, 'GET', '/agents/rot/webhook')).body.webhook_url as string;
    expect(now).not.toBe(url);
    expect(r.body).toBe(`Rotated webhook for agent 'rot'\n---\n${now}`);
    expect((await postWebhook(app.base, path, 'old')).status).toBe(401);
  });
});

describe('topics (behaviour.md §2.10: every topic; §2.12 event hub)', () => {
  it.each(['main', 'event', 'app:x', 'bash:b', 'system'])('when /events runs in topic %s, then it lists the inbox', async (topic) => {
    const { c, post } = await fresh(`t-${topic.replace(/:/g, '-')}`);
    const e = await post('hello');
    const r = await c.exec(topic, '/events');
    expect(r.head?.ok).toBe(true);
    expect(r.body).toContain(`  ${e.id}  pending`);
  });

  it('when the event hub is opened, then its page is the /events page with the webhook line before next:', async () => {
    const { c, post, url } = await fresh('hubby');
    const e = await post('Ping from CI');
    const expected = [
      'Event hub', '---',
      'Event inbox of hubby — 1 pending (newest first)',
      `  ${e.id}  pending  ${e.at}  Ping from CI`,
      '',
      `Webhook: ${url}`,
      'next: /events.read <id> · /events.ack <id>',
    ].join('\n');
    expect((await run(c, '/open', 'event')).body).toBe(expected);
    expect((await run(c, '/refresh', 'event')).body).toBe(expected);
  });

  it('when the event hub is opened with an empty inbox and no token, then it says how to create one and creates nothing', async () => {
    await call(app.base, 'POST', '/agents', { body: { agent_id: 'hubless' } });
    const r = await run(app.client('hubless'), '/open', 'event');
    expect(r.body).toBe(['Event hub', '---', 'Event inbox of hubless — 0 pending (newest first)', '  (no events)', '', 'Webhook: (none) — /webhook show creates one'].join('\n'));
    const again = await run(app.client('hubless'), '/open', 'event');
    expect(again.body).toBe(r.body);
  });
});

describe('text safety', () => {
  it('when an event text holds command and template syntax, then /events.read prints it literally', async () => {
    const { c, post } = await fresh('literal');
    const text = '{Response.body} $HOME `id` @shortcut-1 /open ~/x';
    const e = await post(text);
    expect((await run(c, `/events.read ${e.id}`)).body.split('\n')[6]).toBe(text);
  });
});
