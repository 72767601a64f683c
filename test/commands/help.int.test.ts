import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bench, page, type CommandBench } from './support.js';

let b: CommandBench;
beforeAll(async () => { b = await bench(); });
afterAll(async () => { await b.close(); });

/** behaviour.md §2.4, verbatim. */
const HELP_PAGE = page('Loom commands', [
  'Documents  /open <file|folder|URL|app:NAME|@shortcut|#anchor> · /back · /refresh · /close · /nav [menu] · /source [target] · /info [@shortcut]',
  'Actions    /act · /act.<id> --help · /act.<id> [values] [--field value]',
  'Files      /ls [path] · /edit <file> · /write <file> · /append <file> · /replace <file> · /undo [file]',
  'Variables  /set · /set {name} = "v" · /set $NAME = "v" · /unset <names>',
  'Shell      /exec [--timeout s] <command>',
  'Packages   /install <source> · /uninstall <name> · /packages',
  'Events     /events · /events.read <id> · /events.ack <id> · /events.clear [--all] · /webhook [show|rotate]',
  'Topics     /topics [type]',
  'Details: /help <command>',
]);

describe('behaviour.md §2.4 /help', () => {
  it('when /help runs in a topic without a document, then the fixed page is printed', async () => {
    const r = await b.run('main', '/help');
    expect(r).toMatchObject({ ok: true, code: null });
    expect(r.body).toBe(HELP_PAGE);
    expect(r.content).toBe(`re: /help\n${HELP_PAGE}`);
  });

  it('when /help runs in a hub or an app topic, then the same page is printed', async () => {
    expect((await b.run('system', '/help')).body).toBe(HELP_PAGE);
    expect((await b.run('app:weather', '/help')).body).toBe(HELP_PAGE);
  });

  it('when a request_id is given, then the re: line carries it in brackets', async () => {
    const out = await b.t.client('leo').exec('main', '/help', 'req-7');
    expect(out.content).toBe(`re: [req-7] /help\n${HELP_PAGE}`);
    expect(out.head?.request_id).toBe('req-7');
  });

  it('when /help set and /help /set are asked, then both print Help: /set, ---, syntax, a sentence', async () => {
    const a = await b.run('main', '/help set');
    const c = await b.run('main', '/help /set');
    expect(a.ok).toBe(true);
    expect(c.body).toBe(a.body);
    const lines = a.body.split('\n');
    expect(lines.slice(0, 2)).toEqual(['Help: /set', '---']);
    expect(lines).toContain('/set {name} = "value"');
    expect(lines).toContain('/set $NAME = "value"');
  });

  it('when /help exec is asked, then its syntax line and --timeout flag are shown', async () => {
    const r = await b.run('main', '/help EXEC');
    const lines = r.body.split('\n');
    expect(lines[0]).toBe('Help: /exec');
    expect(lines[2]).toBe('/exec [--timeout <s>] <shell text>');
    expect(lines.some((l) => l.startsWith('--timeout'))).toBe(true);
  });

  it.each(['help', 'info', 'open', 'back', 'refresh', 'close', 'nav', 'source', 'ls', 'edit', 'write', 'append', 'replace',
    'undo', 'act', 'action', 'set', 'unset', 'exec', 'install', 'uninstall', 'packages', 'events', 'webhook', 'topics'])(
    'when /help %s is asked, then a Help: page with at least a syntax line and a sentence is printed', async (word) => {
      const r = await b.run('main', `/help ${word}`);
      const lines = r.body.split('\n');
      expect(lines.slice(0, 2)).toEqual([`Help: /${word}`, '---']);
      expect(lines.length).toBeGreaterThanOrEqual(4);
    });

  it('when the command has no help, then NOT_FOUND No help for /<word>', async () => {
    const r = await b.run('main', '/help nope');
    expect(r).toMatchObject({ ok: false, code: 'NOT_FOUND' });
    expect(r.body).toBe('ERROR(NOT_FOUND): No help for /nope');
    expect((await b.run('main', '/help /nope')).body).toBe('ERROR(NOT_FOUND): No help for /nope');
  });
});
