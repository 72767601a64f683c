import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { loom } from './support.js';

let d: RunningDaemon;
beforeAll(async () => { d = await startDaemon(); });
afterAll(async () => { await d?.kill(); });

const agentOf = (stdout: string) => /^agent: +(\S+)$/m.exec(stdout)?.[1];

describe("behaviour.md §2.13 loom <topic> '<cmd>'", () => {
  it('when the command succeeds, then the content without the re: line is printed and the exit code is 0', async () => {
    const r = await loom(d, ['main', '/info'], { LOOM_AGENT_ID: 'leo' });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Session main\n---\nagent:     leo\ntype:      tab\ndocument:  (none)\n');
    expect(r.stderr).toBe('');
  });

  it('when the command fails, then the ERROR line is on stdout and the exit code is 1', async () => {
    const r = await loom(d, ['main', '/frobnicate'], { LOOM_AGENT_ID: 'leo' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('ERROR(COMMAND_UNSUPPORTED): Unknown command: /frobnicate\nRecovery: /help lists the commands\n');
  });

  it('when /exec exits non-zero, then exit 1 with the EXIT_<n> body', async () => {
    const r = await loom(d, ['main', '/exec echo out; exit 4'], { LOOM_AGENT_ID: 'leo' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('ERROR(EXIT_4): command exited with status 4\nexit: 4 | cwd: ~\n---\nout\n');
  });

  it('when the command has several lines, then the body is sent with it', async () => {
    const r = await loom(d, ['main', '/exec echo one\necho two'], { LOOM_AGENT_ID: 'leo' });
    expect(r.stdout).toBe('exit: 0 | cwd: ~\n---\none\ntwo\n');
  });

  it('when the topic is invalid, then the HTTP error is printed and the exit code is 1', async () => {
    const r = await loom(d, ['a b', '/help'], { LOOM_AGENT_ID: 'leo' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('ERROR(HTTP_400): Invalid topic: a b\n');
  });

  it('when --json is given, then head, content and done are printed as JSON', async () => {
    const r = await loom(d, ['--json', 'main', '/info'], { LOOM_AGENT_ID: 'leo' });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { head: Record<string, unknown>; content: string; done: boolean };
    expect(out.head).toEqual({ ok: true, code: null, cmd: '/info', request_id: null, agent_id: 'leo', topic: 'main', topic_type: 'tab', meta: null });
    expect(out.content).toBe('re: /info\nSession main\n---\nagent:     leo\ntype:      tab\ndocument:  (none)');
    expect(out.done).toBe(true);
  });

  it('when --json is given and the command fails, then the JSON head says ok false and the exit code is 1', async () => {
    const r = await loom(d, ['main', '/help nope', '--json'], { LOOM_AGENT_ID: 'leo' });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { head: { ok: boolean; code: string } };
    expect(out.head).toMatchObject({ ok: false, code: 'NOT_FOUND' });
  });
});

describe('behaviour.md §2.13 agent selection: --agent > LOOM_AGENT_ID > loom agent use > default', () => {
  it('when nothing selects an agent, then default is used (and registered on first use)', async () => {
    const r = await loom(d, ['main', '/info']);
    expect(r.code).toBe(0);
    expect(agentOf(r.stdout)).toBe('default');
  });

  it('when LOOM_AGENT_ID is set, then it is used', async () => {
    expect(agentOf((await loom(d, ['main', '/info'], { LOOM_AGENT_ID: 'env-agent' })).stdout)).toBe('env-agent');
  });

  it('when --agent is given as well, then it wins over LOOM_AGENT_ID (before or after the topic)', async () => {
    expect(agentOf((await loom(d, ['--agent', 'flag-agent', 'main', '/info'], { LOOM_AGENT_ID: 'env-agent' })).stdout)).toBe('flag-agent');
    expect(agentOf((await loom(d, ['main', '/info', '--agent=flag2'], { LOOM_AGENT_ID: 'env-agent' })).stdout)).toBe('flag2');
  });

  it('when loom agent use <id> was run, then it is used below LOOM_AGENT_ID and --agent', async () => {
    const use = await loom(d, ['agent', 'use', 'saved-agent']);
    expect(use.code).toBe(0);
    expect(use.stdout).toBe('Default agent: saved-agent\n');
    expect(existsSync(join(d.dataDir, 'cli.json'))).toBe(true);
    try {
      expect(agentOf((await loom(d, ['main', '/info'])).stdout)).toBe('saved-agent');
      expect(agentOf((await loom(d, ['main', '/info'], { LOOM_AGENT_ID: 'env-agent' })).stdout)).toBe('env-agent');
      expect(agentOf((await loom(d, ['--agent', 'flag-agent', 'main', '/info'])).stdout)).toBe('flag-agent');
    } finally {
      expect((await loom(d, ['agent', 'use', 'default'])).code).toBe(0);
    }
    expect(JSON.parse(readFileSync(join(d.dataDir, 'cli.json'), 'utf8'))).toEqual({ agent: 'default' });
  });

  it('when the agent is unknown, then it is registered with a derived home on the first exec', async () => {
    const before = await new LoomClient(d.base).listAgents();
    expect(before.body.agents.map((a) => a.id)).not.toContain('newcomer');
    const r = await loom(d, ['--agent', 'newcomer', 'main', '/exec pwd']);
    expect(r.code).toBe(0);
    const home = join(d.dataDir, 'agents', 'newcomer', 'home');
    expect(r.stdout).toBe(`exit: 0 | cwd: ~\n---\n${home}\n`);
    const after = await new LoomClient(d.base).listAgents();
    expect(after.body.agents.find((a) => a.id === 'newcomer')?.home).toBe(home);
  });

  it('when the agent id can never be registered, then the 401 is printed and the exit code is 1', async () => {
    const r = await loom(d, ['--agent', '..', 'main', '/info']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Unknown agent: ..');
  });
});

describe('behaviour.md §2.13 --port', () => {
  it('when --port is given, then it wins over SVC_PORT', async () => {
    const r = await loom(d, ['--port', String(d.port), 'main', '/info'], { SVC_PORT: String(await freePort()), LOOM_AGENT_ID: 'leo' });
    expect(r.code).toBe(0);
    expect(agentOf(r.stdout)).toBe('leo');
  });
});

describe('behaviour.md §2.13 unreachable daemon', () => {
  it('when nothing listens on the port, then the exec form exits 3 with a message on stderr', async () => {
    const r = await loom({ port: await freePort(), dataDir: d.dataDir }, ['main', '/help']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^loom: daemon not reachable/);
  });
});
