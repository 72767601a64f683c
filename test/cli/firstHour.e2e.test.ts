import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

/*
 * The first hour of a new user (behaviour.md §2.13, §17): `loom start` with a daemon option, a
 * mistyped slash command, a bad --sandbox, a port held by another server, and an install of a file
 * of the shell's folder that lies outside the agent's workspace. Each answer says what to do next.
 */

let d: RunningDaemon;
const env = () => ({ SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, LOOM_AGENT_ID: 'leo' });

beforeAll(async () => {
  d = await startDaemon();
  expect((await runCli(['agent', 'add', 'leo', '--allow', '/opt'], env())).code).toBe(0);
});
afterAll(async () => {
  await d?.stop();
});

describe('loom start takes the daemon\'s options', () => {
  it('when started with --sandbox workspace, then the daemon it starts confines by default', async () => {
    const port = await freePort();
    const e = { SVC_PORT: String(port), SVC_DATA_DIR: tempDir() };
    const started = await runCli(['start', '--sandbox', 'workspace', '--quiet'], e);
    try {
      expect(started.code).toBe(0);
      const describe = await (await fetch(`http://127.0.0.1:${port}/describe`)).json() as { sandbox: { default: string } };
      expect(describe.sandbox.default).toBe('workspace');
    } finally {
      expect((await runCli(['stop'], e)).code).toBe(0);
    }
  });

  it('when asked for help, then start lists every option of loom daemon', async () => {
    const options = (help: string) => [...help.split('Global Options:')[0].matchAll(/^\s+(--[a-z-]+)/gm)].map((m) => m[1]).filter((o) => o !== '--help');
    const daemon = options((await runCli(['daemon', '--help'])).stdout);
    const start = options((await runCli(['start', '--help'])).stdout);
    expect(daemon.length).toBeGreaterThan(0);
    expect(start).toEqual(daemon);
  });
});

describe('usage errors exit 2', () => {
  it('when --sandbox names no mode, then agent add is a usage error (exit 2) and nothing is registered', async () => {
    const r = await runCli(['agent', 'add', 'ann', '--sandbox', 'strict'], env());
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'loom: invalid --sandbox "strict" (use none or workspace)\n' });
    expect((await runCli(['agent', 'list', '--json'], env())).stdout).not.toContain('"ann"');
  });
});

describe('a mistyped slash command', () => {
  it('when the word is close to a command, then the recovery line names it', async () => {
    const r = await runCli(['main', '/opne', '~/x.md'], env());
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'ERROR(COMMAND_UNSUPPORTED): Unknown command: /opne\nRecovery: did you mean /open? /help lists the commands\n' });
  });
});

describe('a port held by something that is not Loom', () => {
  let other: Server;
  let port = 0;
  beforeAll(async () => {
    port = await freePort();
    other = createServer((_req, res) => { res.writeHead(200, { 'Content-Type': 'text/html' }); res.end('<html>hello</html>'); });
    await new Promise<void>((r) => other.listen(port, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    await new Promise((r) => other.close(r));
  });

  it('when a command is sent there, then the CLI says the port holds something else (exit 3), not that an answer was cut off', async () => {
    const r = await runCli(['--port', String(port), 'main', '/help'], { ...env(), SVC_PORT: '' });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`loom: port ${port} is held by something that is not Loom (POST /exec answered text/html: <html>hello</html>); start Loom on another port (loom --port <n> start), or stop what listens on ${port}\n`);
  });

  it('when loom status asks there, then it says so and exits 3', async () => {
    const r = await runCli(['--port', String(port), 'status'], { ...env(), SVC_PORT: '' });
    expect(r).toEqual({ code: 3, stdout: `loom is not running on port ${port}: the port is held by something that is not Loom (HTTP 200, text/html: <html>hello</html>)\n`, stderr: '' });
  });
});

describe('loom install of a file outside the agent\'s workspace', () => {
  it('when the shell\'s folder is not in the workspace, then the answer adds the command that allows it', async () => {
    const work = tempDir('loom-work-');
    writeFileSync(join(work, 'notes.md'), '---\nname: notes\ntype: app\n---\n\n# Notes\n');
    const r = await runCli(['install', './notes.md'], env(), 20000, work);
    expect(r).toEqual({ code: 1, stdout: '', stderr: `ERROR(FORBIDDEN): Path outside the workspace: ${join(work, 'notes.md')}\nRecovery: loom agent add leo --allow "/opt" "${work}"\n` });
    expect((await runCli(['agent', 'add', 'leo', '--allow', '/opt', work], env())).code).toBe(0);
    expect((await runCli(['install', './notes.md'], env(), 20000, work)).code).toBe(0);
  });
});
