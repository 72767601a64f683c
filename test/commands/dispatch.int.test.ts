import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bench, type CommandBench } from './support.js';

let b: CommandBench;
beforeAll(async () => { b = await bench(); });
afterAll(async () => { await b.close(); });

const HUB_TEXT = 'ERROR(INVALID_TARGET): Hub topics show their page only; open documents in a tab or app topic.';

describe('behaviour.md §2.1 dispatch', () => {
  it('when the command word is unknown, then COMMAND_UNSUPPORTED with the §1.6 text and recovery line', async () => {
    const r = await b.run('main', '/frobnicate');
    expect(r).toMatchObject({ ok: false, code: 'COMMAND_UNSUPPORTED' });
    expect(r.body).toBe('ERROR(COMMAND_UNSUPPORTED): Unknown command: /frobnicate\nRecovery: /help lists the commands');
    expect(r.content).toBe('re: /frobnicate\nERROR(COMMAND_UNSUPPORTED): Unknown command: /frobnicate\nRecovery: /help lists the commands');
  });

  it('when an unknown word is upper-case, then the message shows it lower-cased', async () => {
    const r = await b.run('main', '/FROBNICATE now');
    expect(r.body).toBe('ERROR(COMMAND_UNSUPPORTED): Unknown command: /frobnicate\nRecovery: /help lists the commands');
  });

  it('when the command word is upper-case, then it is dispatched like the lower-case word', async () => {
    const upper = await b.run('main', '/HELP');
    const lower = await b.run('main', '/help');
    expect(upper.ok).toBe(true);
    expect(upper.body).toBe(lower.body);
    expect(upper.body.split('\n')[0]).toBe('Loom commands');
  });

  it('when the header has surrounding whitespace, then it is trimmed before dispatch', async () => {
    const r = await b.run('main', '/help   \n');
    expect(r.ok).toBe(true);
    expect(r.head.cmd).toBe('/help');
  });

  it('when the first line is longer than 200 characters, then head.cmd and the re: line show 199 + …', async () => {
    const header = `/frobnicate ${'x'.repeat(250)}`;
    const r = await b.run('main', `${header}\nbody`);
    const shown = `${header.slice(0, 199)}…`;
    expect(r.head.cmd).toBe(shown);
    expect(r.content.split('\n')[0]).toBe(`re: ${shown}`);
  });

  it('when a command that takes no body gets one, then INVALID_ARGS with the §2.1 item 7 text', async () => {
    const r = await b.run('main', '/help\nsome body');
    expect(r).toMatchObject({ ok: false, code: 'INVALID_ARGS' });
    expect(r.body).toBe('ERROR(INVALID_ARGS): /help does not take a body (text after the first line)');
    for (const word of ['info', 'topics', 'unset']) {
      const x = await b.run('main', `/${word}\r\nx`);
      expect(x.body).toBe(`ERROR(INVALID_ARGS): /${word} does not take a body (text after the first line)`);
    }
  });

  it('when the body of such a command is blank, then it runs', async () => {
    const r = await b.run('main', '/help\n   \n\n');
    expect(r.ok).toBe(true);
  });

  it('when a hub topic gets an unknown word of action-id form, then INVALID_TARGET with the hub text', async () => {
    const r = await b.run('system', '/frobnicate');
    expect(r).toMatchObject({ ok: false, code: 'INVALID_TARGET' });
    expect(r.body).toBe(HUB_TEXT);
  });

  it('when a hub topic gets /open <target>, then INVALID_TARGET with the hub text', async () => {
    for (const hub of ['system', 'agent']) {
      const r = await b.run(hub, '/open x');
      expect(r).toMatchObject({ ok: false, code: 'INVALID_TARGET' });
      expect(r.body).toBe(HUB_TEXT);
    }
  });

  it('when a hub topic gets /back, /nav or /act, then INVALID_TARGET with the hub text', async () => {
    for (const cmd of ['/back', '/nav', '/act']) {
      const r = await b.run('agent', cmd);
      expect(r.body).toBe(HUB_TEXT);
    }
  });

  it('when a hub topic gets a word that is not of action-id form, then COMMAND_UNSUPPORTED', async () => {
    const r = await b.run('system', '/9lives');
    expect(r.body).toBe('ERROR(COMMAND_UNSUPPORTED): Unknown command: /9lives\nRecovery: /help lists the commands');
  });

  it('when a hub topic gets an ordinary command, then it works normally', async () => {
    const r = await b.run('system', '/info');
    expect(r.ok).toBe(true);
    expect(r.head.meta).toBeNull();
    expect(r.head.topic_type).toBe('hub');
  });
});
