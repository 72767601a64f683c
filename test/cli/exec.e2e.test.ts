import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { CLI, freePort, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { loom } from './support.js';

let d: RunningDaemon;
/** The agent every test here runs as (registered once; the CLI never registers agents). */
const leo = { LOOM_AGENT_ID: 'leo' };
let home: string;
beforeAll(async () => {
  d = await startDaemon();
  home = String((await new LoomClient(d.base).registerAgent({ agent_id: 'leo' })).body.home);
  for (const id of ['env-agent', 'flag-agent', 'flag2', 'saved-agent', 'default']) await new LoomClient(d.base).registerAgent({ agent_id: id });
});
afterAll(async () => { await d?.kill(); });

const agentOf = (stdout: string) => /^agent: +(\S+)$/m.exec(stdout)?.[1];

/** Run the CLI with `input` on stdin. */
function withStdin(args: string[], input: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
    p.stdin.end(input);
  });
}

describe('behaviour.md §2.13 loom <topic> <cmd…>', () => {
  it('when the command succeeds, then the content without the re: line is printed and the exit code is 0', async () => {
    const r = await loom(d, ['main', '/info'], leo);
    expect(r).toEqual({ code: 0, stdout: 'Session main\n---\nagent:     leo\ntype:      tab\ndocument:  (none)\n', stderr: '' });
  });

  it('when the command is given as several words, then they are joined with single spaces (no quoting needed)', async () => {
    mkdirSync(join(home, 'notes'), { recursive: true });
    writeFileSync(join(home, 'notes', 'plan.md'), '# Plan\n\n- step one\n');
    const r = await loom(d, ['main', '/open', '~/notes/plan.md'], leo);
    expect(r).toEqual({ code: 0, stdout: 'Opened ~/notes/plan.md\n---\n# Plan\n\n- step one\n', stderr: '' });
    const extra = await loom(d, ['main', '/help', 'extra'], leo);
    expect(extra).toEqual({ code: 1, stdout: '', stderr: 'ERROR(NOT_FOUND): No help for /extra\n' });
  });

  it('when the shell expanded an unquoted ~ to the OS home, then it is the agent home again', async () => {
    const osHome = tempDir('loom-oshome-');
    const r = await loom(d, ['main', '/open', `${osHome}/notes/plan.md`], { ...leo, HOME: osHome });
    expect(r.stdout.split('\n')[0]).toBe('Opened ~/notes/plan.md');
  });

  it('when the expanded path lies inside the agent workspace, then it is kept as typed', async () => {
    const osHome = tempDir('loom-oshome-');
    mkdirSync(join(osHome, 'projects'));
    writeFileSync(join(osHome, 'projects', 'a.md'), '# A\n');
    await new LoomClient(d.base).registerAgent({ agent_id: 'allowed', allowed_paths: [join(osHome, 'projects')] });
    const r = await loom(d, ['main', '/open', `${osHome}/projects/a.md`], { LOOM_AGENT_ID: 'allowed', HOME: osHome });
    expect(r.stdout.split('\n')[0]).toBe(`Opened ${osHome}/projects/a.md`);
  });

  it('when the command is -, then the whole command, body included, is read from stdin', async () => {
    const w = await withStdin(['main', '-'], '/write ~/notes/stdin.md\nline one\nline two\n', leo);
    // The body keeps its final newline (only the header line is trimmed).
    expect(w).toEqual({ code: 0, stdout: 'Created ~/notes/stdin.md (18 bytes, 2 lines)\n', stderr: '' });
    expect(readFileSync(join(home, 'notes', 'stdin.md'), 'utf8')).toBe('line one\nline two\n');
    const empty = await withStdin(['main', '-'], '  \n', leo);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe('loom: the command is empty; e.g.  echo /help | loom main -\n');
  });

  it('when the topic has no command, then exit 2 with an example; a typo of a subcommand is named', async () => {
    expect(await loom(d, ['main'], leo)).toEqual({ code: 2, stdout: '', stderr: "loom: no command for topic 'main'; e.g.  loom main /help   (loom --help lists the CLI commands)\n" });
    expect((await loom(d, ['stauts'], leo)).stderr).toBe("loom: 'stauts' is not a loom command; did you mean: loom status?  (a slash command for topic 'stauts': loom stauts /help)\n");
    expect(await loom(d, ['main', 'help'], leo)).toMatchObject({ code: 2, stderr: 'loom: a command starts with /, e.g.  loom main /help\n' });
    expect(await loom(d, ['main', '--json', '/help'], leo)).toMatchObject({ code: 2, stderr: 'loom: options go before the topic, e.g.  loom --json main /help\n' });
  });

  it('when the command fails, then the ERROR lines go to stderr and the exit code is 1', async () => {
    const r = await loom(d, ['main', '/frobnicate'], leo);
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'ERROR(COMMAND_UNSUPPORTED): Unknown command: /frobnicate\nRecovery: /help lists the commands\n' });
  });

  it('when /exec exits non-zero, then exit 1 with the EXIT_<n> body on stderr', async () => {
    const r = await loom(d, ['main', '/exec echo out; exit 4'], leo);
    expect(r).toMatchObject({ code: 1, stdout: '', stderr: 'ERROR(EXIT_4): command exited with status 4\nexit: 4 | cwd: ~\n---\nout\n' });
  });

  it('when the command has several lines, then the body is sent with it', async () => {
    const r = await loom(d, ['main', '/exec echo one\necho two'], leo);
    expect(r.stdout).toBe('exit: 0 | cwd: ~\n---\none\ntwo\n');
  });

  it('when the topic is invalid, then the daemon refusal is on stderr and the exit code is 1', async () => {
    expect(await loom(d, ['a b', '/help'], leo)).toEqual({ code: 1, stdout: '', stderr: 'loom: Invalid topic: a b\n' });
    const j = await loom(d, ['--json', 'a b', '/help'], leo);
    expect(j.stdout).toBe('');
    expect(JSON.parse(j.stderr)).toEqual({ error: 'Invalid topic: a b', code: 'HTTP_400' });
  });

  it('when --json is given, then head, content and done are printed as JSON', async () => {
    const r = await loom(d, ['--json', 'j1', '/info'], leo);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { head: Record<string, unknown>; content: string; done: boolean };
    expect(out.head).toEqual({ ok: true, code: null, cmd: '/info', request_id: null, agent_id: 'leo', topic: 'j1', topic_type: 'tab', meta: null });
    expect(out.content).toBe('re: /info\nSession j1\n---\nagent:     leo\ntype:      tab\ndocument:  (none)');
    expect(out.done).toBe(true);
  });

  it('when --json is given and the command fails, then {error, code, message} is on stderr and stdout is empty', async () => {
    const r = await loom(d, ['--json', 'main', '/help', 'nope'], leo);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr)).toEqual({ error: 'No help for /nope', code: 'NOT_FOUND', message: 'ERROR(NOT_FOUND): No help for /nope' });
  });
});

describe('behaviour.md §2.13 agent selection: --agent > LOOM_AGENT_ID > loom agent use > default', () => {
  it('when nothing selects an agent, then default is used', async () => {
    expect(agentOf((await loom(d, ['main', '/info'])).stdout)).toBe('default');
  });

  it('when LOOM_AGENT_ID is set, then it is used', async () => {
    expect(agentOf((await loom(d, ['main', '/info'], { LOOM_AGENT_ID: 'env-agent' })).stdout)).toBe('env-agent');
  });

  it('when --agent is given as well, then it wins over LOOM_AGENT_ID (--agent id or --agent=id)', async () => {
    expect(agentOf((await loom(d, ['--agent', 'flag-agent', 'main', '/info'], { LOOM_AGENT_ID: 'env-agent' })).stdout)).toBe('flag-agent');
    expect(agentOf((await loom(d, ['--agent=flag2', 'main', '/info'], { LOOM_AGENT_ID: 'env-agent' })).stdout)).toBe('flag2');
  });

  it('when loom agent use <id> was run, then it is used below LOOM_AGENT_ID and --agent', async () => {
    const use = await loom(d, ['agent', 'use', 'saved-agent']);
    expect(use).toMatchObject({ code: 0, stdout: 'Default agent: saved-agent\n' });
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

  it('when the agent is unknown, then exit 1 says how to create it, and nothing is registered or created', async () => {
    const r = await loom(d, ['--agent', 'typo-agent', 'main', '/info']);
    expect(r).toEqual({ code: 1, stdout: '', stderr: "loom: unknown agent 'typo-agent'; create it with: loom agent add typo-agent\n" });
    const agents = (await new LoomClient(d.base).listAgents()).body.agents.map((a) => a.id);
    expect(agents).not.toContain('typo-agent');
    expect(existsSync(join(d.dataDir, 'agents', 'typo-agent'))).toBe(false);
    const j = await loom(d, ['--json', '--agent', 'typo-agent', 'main', '/info']);
    expect(JSON.parse(j.stderr)).toEqual({ error: "unknown agent 'typo-agent'", code: 'UNKNOWN_AGENT', message: 'create it with: loom agent add typo-agent' });
  });

  it('when the agent id can never be registered, then it says invalid', async () => {
    const r = await loom(d, ['--agent', '..', 'main', '/info']);
    expect(r).toEqual({ code: 1, stdout: '', stderr: "loom: invalid agent id '..'; use 1–64 letters, digits, \".\", \"_\" or \"-\", starting with a letter or digit\n" });
  });
});

describe('behaviour.md §2.13 --port', () => {
  it('when --port is given, then it wins over SVC_PORT', async () => {
    const r = await loom(d, ['--port', String(d.port), 'main', '/info'], { SVC_PORT: String(await freePort()), ...leo });
    expect(r.code).toBe(0);
    expect(agentOf(r.stdout)).toBe('leo');
  });
});

describe('behaviour.md §2.13 unreachable daemon', () => {
  it('when nothing listens on the port, then the exec form exits 3 with a message on stderr', async () => {
    const env = { port: await freePort(), dataDir: d.dataDir };
    const r = await loom(env, ['main', '/help']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^loom: daemon not reachable \(cannot reach http:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED 127\.0\.0\.1:\d+\); start it with: loom start\n$/);
    const j = await loom(env, ['--json', 'main', '/help']);
    expect(j.code).toBe(3);
    expect(JSON.parse(j.stderr)).toMatchObject({ code: 'DAEMON_UNREACHABLE', message: 'start it with: loom start' });
  });
});
