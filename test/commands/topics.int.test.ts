import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bench, page, type CommandBench } from './support.js';

let b: CommandBench;
beforeAll(async () => {
  b = await bench();
  for (const topic of ['main', 'app:weather', 'event', 'bash:build']) expect((await b.run(topic, '/info')).ok).toBe(true);
});
afterAll(async () => { await b.close(); });

/** The rows of a listing, padded as behaviour.md §2.11 says (each column to its longest value). */
function rows(list: Array<[string, string, string]>): string[] {
  const w0 = Math.max(...list.map(([t]) => t.length));
  const w1 = Math.max(...list.map(([, ty]) => ty.length));
  return list.map(([t, ty, st]) => `${t.padEnd(w0)}  ${ty.padEnd(w1)}  ${st}`);
}

const sortByTopic = (a: [string, string, string], c: [string, string, string]) => (a[0].slice(2) < c[0].slice(2) ? -1 : 1);

describe('behaviour.md §2.11 /topics', () => {
  it('when /topics runs, then every topic is listed with * on the calling one, its type and state', async () => {
    const r = await b.run('main', '/topics');
    expect(r).toMatchObject({ ok: true, code: null });
    const list: Array<[string, string, string]> = [
      ['* main', 'tab', '(no document)'],
      ['  app:weather', 'app', '(no document)'],
      ['  event', 'hub', '(hub)'],
      ['  bash:build', 'bash', 'no shell'],
    ];
    expect(r.body).toBe(page('Topics of agent leo (4)', rows(list.sort(sortByTopic))));
  });

  it('when a type filter is given, then only that type is listed plus the calling topic', async () => {
    const hubs = await b.run('main', '/topics hub');
    const hubRows: Array<[string, string, string]> = [['  event', 'hub', '(hub)'], ['* main', 'tab', '(no document)']];
    expect(hubs.body).toBe(page('Topics of agent leo (2)', rows(hubRows.sort(sortByTopic))));
    const apps = await b.run('app:weather', '/topics app');
    expect(apps.body).toBe(page('Topics of agent leo (1)', rows([['* app:weather', 'app', '(no document)']])));
  });

  it('when the calling topic is new, then it is listed (always)', async () => {
    const r = await b.run('fresh', '/topics tab');
    expect(r.body.split('\n')).toContain(rows([['* fresh', 'tab', '(no document)'], ['  main', 'tab', '(no document)']])[0]);
  });

  it('when the filter is not a topic type, then INVALID_ARGS Unknown topic type', async () => {
    const r = await b.run('main', '/topics bogus');
    expect(r).toMatchObject({ ok: false, code: 'INVALID_ARGS' });
    expect(r.body).toBe('ERROR(INVALID_ARGS): Unknown topic type: bogus (use tab, app, bash or hub)');
  });

  it('when another agent has topics, then they are not listed', async () => {
    const other = b.t.client('mia');
    await other.registerAgent({ agent_id: 'mia' });
    await other.exec('secret-topic', '/info');
    const r = await b.run('main', '/topics');
    expect(r.body).not.toContain('secret-topic');
  });

  it('when another topic is executing with a queue, then its state shows · executing · <n> queued', async () => {
    const c = b.t.client('leo');
    const running = c.exec('busy', '/exec sleep 30');
    let row = '';
    for (let i = 0; i < 200 && !row.includes('executing'); i++) {
      row = (await b.run('main', '/topics')).body.split('\n').find((l) => l.startsWith('  busy')) ?? '';
    }
    const queued = c.exec('busy', '/set');
    for (let i = 0; i < 200 && !row.includes('queued'); i++) {
      row = (await b.run('main', '/topics')).body.split('\n').find((l) => l.startsWith('  busy')) ?? '';
    }
    expect(row).toMatch(/^ {2}busy +tab +\(no document\) · executing · 1 queued$/);
    // behaviour.md §1.3: closing the topic interrupts the running command; the queued one runs on a fresh session.
    expect((await c.closeSession('leo', 'busy')).status).toBe(200);
    const first = await running;
    expect(first.head?.code).toBe('CONFLICT');
    expect(first.body).toBe('ERROR(CONFLICT): Topic busy was closed while this command ran');
    expect((await queued).body).toBe('Variables of busy\n---\nNo variables in scope.');
  });
});
