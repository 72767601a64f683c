import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bench, page, type CommandBench } from './support.js';

let b: CommandBench;
beforeAll(async () => { b = await bench(); });
afterAll(async () => { await b.close(); });

describe('behaviour.md §2.3 /info', () => {
  it('when /info runs in a tab topic without a document, then agent, type and document (none)', async () => {
    const r = await b.run('main', '/info');
    expect(r).toMatchObject({ ok: true, code: null });
    expect(r.body).toBe(page('Session main', ['agent:     leo', 'type:      tab', 'document:  (none)']));
  });

  it('when /info runs in an app topic with a config, then the type line names package and config', async () => {
    const r = await b.run('app:weather:seoul', '/info');
    expect(r.body).toBe(page('Session app:weather:seoul', ['agent:     leo', 'type:      app (package weather, config seoul)', 'document:  (none)']));
  });

  it('when /info runs in an app topic without a config, then the type line names the package only', async () => {
    const r = await b.run('app:weather', '/info');
    expect(r.body.split('\n')[3]).toBe('type:      app (package weather)');
  });

  it('when /info runs in bash and hub topics, then the type is bash / hub', async () => {
    expect((await b.run('bash:build', '/info')).body).toBe(page('Session bash:build', ['agent:     leo', 'type:      bash', 'document:  (none)']));
    expect((await b.run('event', '/info')).body).toBe(page('Session event', ['agent:     leo', 'type:      hub', 'document:  (none)']));
  });

  it('when session variables are set, then /info never prints their values', async () => {
    await b.run('secretive', '/set {token} = "s3cr3t-value"');
    const r = await b.run('secretive', '/info');
    expect(r.body).not.toContain('s3cr3t-value');
  });

  it('when the topic has surrounding whitespace, then the canonical (trimmed) topic is shown', async () => {
    const r = await b.run('  main  ', '/info');
    expect(r.body.split('\n')[0]).toBe('Session main');
    expect(r.head.topic).toBe('main');
  });

  it('when /info @x names an unknown shortcut, then NOT_FOUND Unknown shortcut: @x', async () => {
    const r = await b.run('main', '/info @x');
    expect(r).toMatchObject({ ok: false, code: 'NOT_FOUND' });
    expect(r.body).toBe('ERROR(NOT_FOUND): Unknown shortcut: @x');
  });
});
