import { describe, expect, it } from '@jest/globals';
import { freePort, tempDir } from '../helpers/daemon.js';
import { loom } from './support.js';

/** No daemon is needed: usage and help never reach it. */
const dataDir = tempDir();
const none = async () => ({ port: await freePort(), dataDir });

describe('behaviour.md §2.13 usage errors and --help', () => {
  it('when the command is unknown, then exit 2', async () => {
    const r = await loom(await none(), ['nosuchcmd']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'nosuchcmd'");
  });

  it('when an option is unknown or an argument missing, then exit 2', async () => {
    const env = await none();
    expect((await loom(env, ['status', '--bogus'])).code).toBe(2);
    expect((await loom(env, ['agent', 'add'])).code).toBe(2);
  });

  it('when the port is not an integer 1–65535, then exit 2 with the SVC_PORT message', async () => {
    const env = await none();
    const flag = await loom(env, ['--port', 'abc', 'main', '/help']);
    expect(flag).toMatchObject({ code: 2, stdout: '', stderr: 'loom: invalid SVC_PORT "abc"\n' });
    const variable = await loom({ ...env, port: 70000 }, ['status']);
    expect(variable).toMatchObject({ code: 2, stderr: 'loom: invalid SVC_PORT "70000"\n' });
  });

  it.each([
    [[], 'Usage: loom'],
    [['daemon'], 'Usage: loom daemon'],
    [['start'], 'Usage: loom start'],
    [['stop'], 'Usage: loom stop'],
    [['status'], 'Usage: loom status'],
    [['agent'], 'Usage: loom agent'],
    [['agent', 'add'], 'Usage: loom agent add'],
    [['agent', 'list'], 'Usage: loom agent list'],
    [['agent', 'rm'], 'Usage: loom agent rm'],
    [['agent', 'use'], 'Usage: loom agent use'],
  ])('when %j is run with --help, then exit 0 and the help names the command', async (words, usage) => {
    const r = await loom(await none(), [...words, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(usage)).toBe(true);
  });
});
