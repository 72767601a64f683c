import { describe, expect, it } from '@jest/globals';
import { leading } from '../../src/cli/argv.js';
import { daemonForm } from '../../src/cli/daemonArgs.js';

/** daemonForm over a whole argv, the way the entry calls it. */
const read = (argv: string[]) => daemonForm(argv, leading(argv));

describe('daemonForm: `loom daemon` read without the command tree', () => {
  it('when the lines of npm start, loom start, the service unit and replay come, then it reads each option', () => {
    expect(read(['daemon'])).toEqual({ port: undefined, wire: undefined, quiet: false, record: undefined, sandbox: undefined, exitWithStdin: false, removeDataDir: false });
    expect(read(['daemon', '--port', '4100', '--wire', 'user'])).toMatchObject({ port: '4100', wire: 'user' });
    expect(read(['daemon', '--quiet'])).toMatchObject({ quiet: true });
    expect(read(['daemon', '--record=t.jsonl', '--sandbox', 'workspace', '--exit-with-stdin', '--remove-data-dir']))
      .toMatchObject({ record: 't.jsonl', sandbox: 'workspace', exitWithStdin: true, removeDataDir: true });
  });

  it('when global options come before the subcommand, then they count, and the subcommand\'s own --wire wins', () => {
    expect(read(['--port', '4000', '--wire', 'user', 'daemon'])).toMatchObject({ port: '4000', wire: 'user' });
    expect(read(['--port=4000', '--agent', 'a', '--json', 'daemon', '--quiet'])).toMatchObject({ port: '4000', quiet: true });
    expect(read(['--wire', 'user', 'daemon', '--wire', 'agent'])).toMatchObject({ wire: 'agent' });
  });

  it('when a value is hostile, then it is handed on as text for the daemon to refuse (no key from user text)', () => {
    expect(read(['daemon', '--port', '__proto__', '--sandbox', 'constructor'])).toMatchObject({ port: '__proto__', sandbox: 'constructor' });
    expect(Object.keys(read(['daemon', '--wire', '__proto__']) ?? {}).sort()).toEqual(['exitWithStdin', 'port', 'quiet', 'record', 'removeDataDir', 'sandbox', 'wire']);
  });

  it('when the line asks for help, misspells an option, lacks a value or carries a stray word, then it is left to the command tree', () => {
    for (const argv of [
      ['daemon', '--help'], ['daemon', '-h'], ['--help', 'daemon'], ['-V', 'daemon'], ['daemon', '--quite'], ['daemon', '--record'],
      ['daemon', '--record', '--quiet'], ['daemon', 'extra'], ['daemon', '--', 'x'], ['daemon', '--quiet=yes'], ['daemons'], ['main', '/help'], [],
    ]) expect(read(argv)).toBeNull();
  });
});
