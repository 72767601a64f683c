import { describe, expect, it } from '@jest/globals';
import { freePort, tempDir } from '../helpers/daemon.js';
import { loom } from './support.js';

/** No daemon is needed: usage and help never reach it. */
const dataDir = tempDir();
const none = async () => ({ port: await freePort(), dataDir });

/** Every command path of the CLI (the exec form aside). */
const COMMANDS = [
  ['daemon'], ['start'], ['stop'], ['status'], ['version'], ['logs'], ['mcp'],
  ['agent'], ['agent', 'add'], ['agent', 'list'], ['agent', 'rm'], ['agent', 'use'],
  ['agent', 'capability'], ['agent', 'capability', 'mint'], ['agent', 'capability', 'list'], ['agent', 'capability', 'revoke'],
  ['event'], ['event', 'list'], ['event', 'read'], ['event', 'ack'], ['event', 'watch'],
  ['event', 'webhook'], ['event', 'webhook', 'show'], ['event', 'webhook', 'rotate'],
];

describe('behaviour.md §2.13 usage errors and --help', () => {
  it('when an option is unknown or an argument missing, then exit 2 in the CLI voice', async () => {
    const env = await none();
    expect(await loom(env, ['status', '--bogus'])).toMatchObject({ code: 2, stderr: "loom: unknown option '--bogus'\n" });
    expect(await loom(env, ['agent', 'add'])).toMatchObject({ code: 2, stderr: "loom: missing required argument 'id'\n" });
    expect(await loom(env, ['agent', 'ad', 'x'])).toMatchObject({ code: 2, stderr: "loom: unknown command 'ad'\n(Did you mean add?)\n" });
  });

  it('when --json is given with a usage error, then stderr has {error, code: USAGE}', async () => {
    const r = await loom(await none(), ['--json', 'status', '--bogus']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr)).toEqual({ error: "unknown option '--bogus'", code: 'USAGE' });
  });

  it('when the port is not an integer 1–65535, then exit 2 naming the setting that was given', async () => {
    const env = await none();
    expect(await loom(env, ['--port', 'abc', 'main', '/help'])).toMatchObject({ code: 2, stdout: '', stderr: 'loom: invalid --port "abc" (use 1–65535)\n' });
    expect(await loom(env, ['--port', '70000', 'status'])).toMatchObject({ code: 2, stderr: 'loom: invalid --port "70000" (use 1–65535)\n' });
    expect(await loom({ ...env, port: 70000 }, ['status'])).toMatchObject({ code: 2, stderr: 'loom: invalid SVC_PORT "70000"\n' });
    expect(await loom(env, ['--port', '0', 'daemon'])).toMatchObject({ code: 2, stderr: 'loom: invalid --port "0" (use 1–65535)\n' });
  });

  it('when loom --help runs, then it shows the one-command form, the exit codes and examples', async () => {
    const r = await loom(await none(), ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith('Usage: loom [options] <topic> <command…>')).toBe(true);
    expect(r.stdout).toContain('loom [options] <topic> -            read the command (body included) from stdin');
    expect(r.stdout).toContain('Exit codes: 0 ok · 1 the command failed · 2 usage error · 3 daemon not reachable');
    expect(r.stdout).toContain('\nExamples:\n  loom start\n');
  });

  it.each(COMMANDS)('when %s is run with --help, then the help shows the global options and an example', async (...words) => {
    const r = await loom(await none(), [...words, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(`Usage: loom ${words.join(' ')}`)).toBe(true);
    const globals = r.stdout.slice(r.stdout.indexOf('Global Options:'));
    expect(globals).toMatch(/\n {2}--port <n> /);
    expect(globals).toMatch(/\n {2}--agent <id> /);
    expect(globals).toMatch(/\n {2}--json /);
    expect(r.stdout).toMatch(/\nExamples:\n {2}loom /);
  });

  it('when mint --help is read, then the defaults are said once and durations in human units', async () => {
    const r = await loom(await none(), ['agent', 'capability', 'mint', '--help']);
    expect(r.stdout).toContain('--path <prefix>   subtree of the agent home (default: the whole workspace)\n');
    expect(r.stdout).not.toContain('(default: "")');
    expect(r.stdout).toContain('--ttl <duration>  lifetime: 90s, 15m, 1h, 7d or milliseconds; at most 30d\n');
  });

  it('when --ttl is longer than 30d, then the error says so in days before anything is sent', async () => {
    const r = await loom(await none(), ['agent', 'capability', 'mint', '--verbs', 'get', '--ttl', '99d']);
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: "loom: option '--ttl <duration>' argument '99d' is invalid. at most 30d\n" });
    expect((await loom(await none(), ['agent', 'capability', 'mint', '--verbs', 'get', '--ttl', '2592000001'])).stderr).toContain('at most 30d');
  });
});
