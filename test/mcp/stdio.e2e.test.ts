import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { VERSION } from '../../src/version.js';
import { call } from '../helpers/app.js';
import { CLI, freePort, runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { env, loom } from './helpers.js';

/** Start `node dist/cli/main.js mcp <args>` as an MCP server on stdio and connect the SDK client. */
async function stdioClient(args: string[], vars: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'loom-stdio-test', version: '0.0.1' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...args],
    env: { ...(process.env as Record<string, string>), ...vars },
    stderr: 'pipe',
  });
  await client.connect(transport);
  return client;
}

let d: RunningDaemon;
let c: Client;

beforeAll(async () => {
  d = await startDaemon();
  c = await stdioClient(['--agent', 'sam'], { SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir });
});

afterAll(async () => {
  await c.close();
  await d.stop();
});

/** Resolves once the daemon lists the topic of an agent as executing (GET /sessions). */
async function untilExecuting(agentId: string, topic: string): Promise<void> {
  for (;;) {
    const { body } = await call(d.base, 'GET', `/sessions?agent_id=${agentId}`);
    if ((body.sessions as Array<{ topic: string; executing: boolean }>).some((s) => s.topic === topic && s.executing)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('loom mcp over stdio (behaviour.md §10.4)', () => {
  it('when a host initializes, then it sees server info {name: loom, version} and the one tool', async () => {
    expect(c.getServerVersion()).toEqual({ name: 'loom', version: VERSION });
    expect(c.getServerCapabilities()?.experimental).toBeUndefined();
    // The one tool never changes, so no list-changed notifications are promised.
    expect(c.getServerCapabilities()?.tools).toEqual({ listChanged: false });
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(['loom']);
    expect(tools[0].inputSchema.required).toEqual(['topic', 'cmd']);
  });

  it('when started with --agent, then the agent is registered with the default home', async () => {
    const agents = (await call(d.base, 'GET', '/agents')).body.agents as Array<{ id: string; home: string }>;
    expect(agents.find((a) => a.id === 'sam')?.home).toBe(`${d.dataDir}/agents/sam/home`);
  });

  it('when /help is called, then the result is the /exec content without the re: line, in the envelope', async () => {
    const r = await loom(c, 'main', '/help');
    expect(r.isError).toBe(false);
    expect(r.content[0].text).toMatch(/^<loom topic="main">\nLoom commands\n---\n/);
    expect(r.content[0].text.endsWith('\n</loom>')).toBe(true);
  });

  it('when a command fails, then isError is true and the body starts with ERROR(<CODE>): ', async () => {
    const r = await loom(c, 'main', '/no-such-command');
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toMatch(/^<loom topic="main">\nERROR\([A-Z_]+\): /);
  });

  it('when the topic does not parse or cmd lacks /, then the texts of behaviour.md §10.2', async () => {
    expect(await loom(c, 'x:y:z', '/help')).toEqual({ content: [{ type: 'text', text: env('x:y:z', 'ERROR(INVALID_TARGET): Invalid topic: x:y:z') }], isError: true });
    expect(await loom(c, 'main', 'ls')).toEqual({ content: [{ type: 'text', text: env('main', 'ERROR(INVALID_ARGS): Command must start with /') }], isError: true });
  });

  it('when a call of this process runs on a topic, then another call on it is BUSY (not sent to the daemon queue)', async () => {
    const first = loom(c, 'slow', '/exec sleep 1');
    await untilExecuting('sam', 'slow');
    expect(await loom(c, 'slow', '/help')).toEqual({ content: [{ type: 'text', text: env('slow', 'ERROR(BUSY): Topic slow is executing another command. Retry shortly.') }], isError: true });
    expect((await first).isError).toBe(false);
  });

  it('when the daemon answers 401 (agent deleted meanwhile), then ERROR(INTERNAL_ERROR): daemon answered HTTP 401: <error>', async () => {
    const client = await stdioClient(['--agent', 'gone'], { SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir });
    await call(d.base, 'DELETE', '/agents/gone');
    expect(await loom(client, 'main', '/help')).toEqual({ content: [{ type: 'text', text: env('main', 'ERROR(INTERNAL_ERROR): daemon answered HTTP 401: Unknown agent: gone') }], isError: true });
    await client.close();
  });

  it('when LOOM_AGENT_ID is set and no --agent, then that agent is used', async () => {
    const client = await stdioClient([], { SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, LOOM_AGENT_ID: 'envagent' });
    const agents = (await call(d.base, 'GET', '/agents')).body.agents as Array<{ id: string }>;
    expect(agents.map((a) => a.id)).toContain('envagent');
    await client.close();
  });
});

describe('loom mcp lifetime', () => {
  it('when the host closes stdin, then the process exits 0 and has written nothing but MCP to stdout', async () => {
    const p = spawn(process.execPath, [CLI, 'mcp', '--agent', 'short'], { env: { ...process.env, SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    const exited = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
    p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) + '\n');
    while (!out.includes('\n')) await new Promise((r) => setTimeout(r, 20));
    p.stdin.end();
    expect(await exited).toBe(0);
    expect(out.trim().split('\n').map((l) => JSON.parse(l))).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
  });
});

describe('loom mcp start-up (behaviour.md §10.4)', () => {
  it('when no daemon answers, then it starts one detached and serves calls through it', async () => {
    const port = await freePort();
    const dataDir = tempDir();
    const client = await stdioClient([], { SVC_PORT: String(port), SVC_DATA_DIR: dataDir });
    try {
      expect((await loom(client, 'main', '/help')).isError).toBe(false);
      const health = await call(`http://127.0.0.1:${port}`, 'GET', '/health');
      expect(health.body.ok).toBe(true);
    } finally {
      await client.close();
      // The daemon was started detached: it outlives the bridge, so stop it here.
      await call(`http://127.0.0.1:${port}`, 'POST', '/shutdown');
    }
  });

  it('when the daemon cannot start, then exit 1 with `loom: daemon did not start`', async () => {
    // Something that is not Loom holds the port: /health fails and the spawned daemon cannot bind.
    const blocker = createServer((s) => s.destroy());
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await runCli(['mcp'], { SVC_PORT: String(port), SVC_DATA_DIR: tempDir() });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe('loom: daemon did not start\n');
      expect(r.stdout).toBe('');
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('when SVC_PORT is not a port, then exit 2 (usage) without starting anything', async () => {
    const r = await runCli(['mcp'], { SVC_PORT: '0', SVC_DATA_DIR: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('loom: invalid SVC_PORT "0"\n');
  });
});
