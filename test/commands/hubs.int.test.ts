import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Clock } from '../../src/domain/ports.js';
import { VERSION } from '../../src/version.js';
import { bench, page, type CommandBench } from './support.js';

/**
 * Real timers with a "now" that only moves when a test moves it, so uptime can be checked without
 * waiting and without depending on how long a loaded machine takes between two commands.
 */
let offset = 0;
const start = Date.now();
const clock: Clock = {
  now: () => start + offset,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

let b: CommandBench;
beforeAll(async () => { b = await bench({ clock }); });
afterAll(async () => { await b.close(); });

const MINT = 'Mint from a shell: loom agent capability mint --path <prefix> --verbs get,put --ttl 15m [--single-use]';

describe('behaviour.md §2.12 system hub', () => {
  it('when /open runs in the system topic, then version, uptime and this agent\'s queues are shown', async () => {
    await b.run('main', '/info');
    offset = ((1 * 24 + 2) * 60 + 3) * 60000 + 59000;
    const r = await b.run('system', '/open');
    expect(r).toMatchObject({ ok: true, code: null });
    expect(r.head.meta).toBeNull();
    expect(r.body).toBe(page('System hub', [
      `Loom ${VERSION} · protocol 0.1 · role agent-host · port ${b.t.port}`,
      'Uptime: 1d 2h 3m · agents: 1 · sessions: 2',
      'Queues of leo',
      '  main    idle',
      '  system  executing · 0 queued',
    ]));
  });

  it('when /refresh runs in the system topic, then the page is rendered again', async () => {
    const r = await b.run('system', '/refresh');
    expect(r.body.split('\n').slice(0, 3)).toEqual(['System hub', '---', `Loom ${VERSION} · protocol 0.1 · role agent-host · port ${b.t.port}`]);
  });

  it('when another agent has topics, then only the caller\'s queues are listed', async () => {
    const other = await b.agent('mia');
    await other.run('elsewhere', '/info');
    const r = await b.run('system', '/refresh');
    expect(r.body).not.toContain('elsewhere');
    expect(r.body.split('\n')[3]).toBe('Uptime: 1d 2h 3m · agents: 2 · sessions: 3');
  });
});

describe('behaviour.md §2.12 agent hub', () => {
  it('when /open runs in the agent topic, then id, home, paths, created, webhook, capabilities and the mint line', async () => {
    const agents = await b.t.client().listAgents();
    const leo = agents.body.agents.find((a) => a.id === 'leo');
    const r = await b.run('agent', '/open');
    expect(r.body).toBe(page('Agent hub', [
      'Agent: leo',
      `Home: ${b.home}`,
      'Allowed paths: (none)',
      `Created: ${leo?.createdAt}`,
      'Webhook: (none)',
      'Capabilities (0 live)',
      MINT,
    ]));
    expect((await b.run('agent', '/refresh')).body).toBe(r.body);
  });

  it('when the agent has allowed paths, then they are listed', async () => {
    const ada = b.t.client('ada');
    await ada.registerAgent({ agent_id: 'ada', allowed_paths: ['/srv/one', '/srv/two'] });
    const out = await ada.exec('agent', '/open');
    expect(out.body?.split('\n')[4]).toBe('Allowed paths: /srv/one, /srv/two');
  });
});

describe('behaviour.md §2.3 /refresh outside a hub', () => {
  it('when no document is open, then INVALID_TARGET No document open.', async () => {
    const r = await b.run('main', '/refresh');
    expect(r).toMatchObject({ ok: false, code: 'INVALID_TARGET', body: 'ERROR(INVALID_TARGET): No document open.' });
  });
});

describe('behaviour.md §2.12 bash hub', () => {
  it('when /open runs in the bash topic, then the agent\'s bash topics are listed with their shell state', async () => {
    await b.run('bash:build', '/exec cd /tmp && true');
    await b.run('bash:idle', '/info');
    const r = await b.run('bash', '/open');
    expect(r).toMatchObject({ ok: true, code: null });
    const pid = (await b.run('bash:build', '/exec echo $$')).body.split('\n').pop();
    const again = await b.run('bash', '/open');
    expect(again.body).toBe(page('Bash hub', [
      'Bash topics (2)',
      `  bash:build  shell alive · cwd /tmp · pid ${pid} · last: echo $$`,
      '  bash:idle   no shell',
      'next: /exec <command> in topic bash:<name>',
    ]));
    expect(r.body).toContain(`  bash:build  shell alive · cwd /tmp · pid ${pid} · last: cd /tmp && true\n`);
  });
});
