import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { VERSION } from '../../src/version.js';
import { call, raw, startApp, type TestApp } from '../helpers/app.js';
import { MCP_HEADERS, env, httpClient, loom, rpc } from './helpers.js';

// behaviour.md §10.1, written out here so a drift in src/domain/mcpTool.ts fails this test.
const DESCRIPTION = `Run one Loom command in a topic and get its text result. Loom is your local workspace runtime:
you read Markdown documents, call the actions they declare (HTTP calls or local commands), edit
files, run shell commands and read your event inbox — all through slash commands.

topic: the session to use. Each topic keeps its own open document, history, variables and shell.
  main, notes, …        free tabs
  app:NAME[:CONFIG]     an installed app; CONFIG keeps a separate set of settings
  bash:NAME             a persistent shell: cwd and exports survive between /exec calls
  app tool bash event system agent   hubs (overview pages; event = your inbox)
cmd: one slash command. Text after the first line is the command's body (used by /write,
  /append, /replace, /set and multi-line /exec scripts).

Start with /help. Common commands:
  /open <file|folder|URL|app:NAME|@shortcut|#anchor>   /back   /info
  /act.<id> --help   then   /act.<id> value --field value
  /ls [path]   /edit <file>   /write <file> + body   /replace <file> --old "text" + body
  /exec <shell command>          (do not wrap the command in quotes)
  /set $NAME = "value"   /events   /events.read <id>   /events.ack <id>

Results start with a status line, then ---, then content; follow the "next:" hints.
Failures start with ERROR(CODE): message and may end with a Recovery: line.
A topic runs one command at a time: ERROR(BUSY) means retry shortly or use another topic.`;

const TOPIC_DESC = 'Session to use: main (or any name), app:NAME, app:NAME:CONFIG, bash:NAME, or a hub: app, tool, bash, event, system, agent.';
const CMD_DESC = 'One slash command, e.g. /help, /open ./notes.md, /act.search --q "rust", /exec ls -la. Lines after the first are the command\'s body.';

let t: TestApp;
let c: Client;

beforeAll(async () => {
  t = await startApp({ env: { SVC_ALLOWED_ORIGINS: 'http://app.example:8080' } });
  ({ client: c } = await httpClient(t.base, 'leo'));
});

afterAll(async () => {
  await c.close();
  await t.close();
});

/** Resolves once the topic of an agent is executing (in-process view of the queue machine). */
async function untilExecuting(agentId: string, topic: string): Promise<void> {
  for (;;) {
    if (t.c.system.topicStatuses(agentId).some((s) => s.session.ref.topic === topic && s.executing)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('POST /mcp initialize and tools/list (spec §4.8, behaviour.md §10.1)', () => {
  it('when a client initializes, then server info is {name: loom, version} and no session id is issued', async () => {
    const { client, transport } = await httpClient(t.base);
    expect(client.getServerVersion()).toEqual({ name: 'loom', version: VERSION });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(transport.sessionId).toBeUndefined();
    await client.close();
  });

  it('when tools/list is called, then exactly one tool `loom` with title, description and input schema is listed', async () => {
    const { tools } = await c.listTools();
    expect(tools).toHaveLength(1);
    const [tool] = tools;
    expect(tool.name).toBe('loom');
    expect(tool.title).toBe('Loom');
    expect(tool.description).toBe(DESCRIPTION);
    expect(tool.inputSchema.type).toBe('object');
    expect(tool.inputSchema.required).toEqual(['topic', 'cmd']);
    expect(tool.inputSchema.properties).toEqual({
      topic: { type: 'string', minLength: 1, description: TOPIC_DESC },
      cmd: { type: 'string', minLength: 1, description: CMD_DESC },
    });
  });

  it('when a POST accepts JSON and SSE, then the answer is application/json without Mcp-Session-Id', async () => {
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } }) });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers['mcp-session-id']).toBeUndefined();
    expect(JSON.parse(r.body).result.serverInfo).toEqual({ name: 'loom', version: VERSION });
    // The one tool never changes: no tools/list_changed notifications are promised.
    expect(JSON.parse(r.body).result.capabilities.tools).toEqual({ listChanged: false });
  });

  it('when tools/call comes without a prior initialize (stateless), then it is answered', async () => {
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: rpc('tools/call', { name: 'loom', arguments: { topic: 'main', cmd: '/help' } }) });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).result.isError).toBe(false);
  });
});

describe('tools/call (spec §4.8, behaviour.md §10.2)', () => {
  it('when /help runs, then the result is the /exec content without its re: line in the envelope, isError false', async () => {
    const viaExec = await t.client('leo').exec('main', '/help');
    const r = await loom(c, 'main', '/help');
    expect(r.isError).toBe(false);
    expect(r.content).toEqual([{ type: 'text', text: env('main', viaExec.body as string) }]);
  });

  it('when the topic has surrounding blanks, then the envelope carries the canonical topic', async () => {
    const r = await loom(c, '  notes ', '/topics');
    expect(r.content[0].text.startsWith('<loom topic="notes">\n')).toBe(true);
  });

  it('when the command fails, then isError is true and the body starts with ERROR(<CODE>): ', async () => {
    const r = await loom(c, 'main', '/no-such-command');
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toMatch(/^<loom topic="main">\nERROR\([A-Z_]+\): .*\n<\/loom>$/s);
  });

  it('when the topic does not parse, then ERROR(INVALID_TARGET): Invalid topic: <raw>, with the raw topic XML-escaped', async () => {
    const r = await loom(c, 'a"<&>', '/help');
    expect(r).toEqual({ content: [{ type: 'text', text: env('a&quot;&lt;&amp;&gt;', 'ERROR(INVALID_TARGET): Invalid topic: a"<&>') }], isError: true });
  });

  it('when cmd does not start with /, then ERROR(INVALID_ARGS): Command must start with /', async () => {
    const r = await loom(c, 'main', 'help');
    expect(r).toEqual({ content: [{ type: 'text', text: env('main', 'ERROR(INVALID_ARGS): Command must start with /') }], isError: true });
  });

  it('when an argument is empty, then the SDK refuses it against the schema (minLength 1) with isError true', async () => {
    const r = await loom(c, '', '/help');
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toContain('Input validation error');
  });

  it('when a request body is larger than 100 KB, then it is still accepted (no 100 KB parser on /mcp)', async () => {
    const cmd = `/no-such-command\n${'x'.repeat(300 * 1024)}`;
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: rpc('tools/call', { name: 'loom', arguments: { topic: 'big', cmd } }) });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).result.isError).toBe(true);
  });
});

describe('BUSY (spec §4.8, behaviour.md §10.3)', () => {
  it('when /exec holds the topic, then a tools/call on it gets ERROR(BUSY) at once, and works again afterwards', async () => {
    const running = await fetch(`${t.base}/exec`, { method: 'POST', headers: { 'X-Agent-Id': 'leo', 'Content-Type': 'application/json' }, body: JSON.stringify({ topic: 'work', cmd: '/exec sleep 2' }) });
    // The 200 headers are sent when the command starts (behaviour.md §9.4), so the topic is executing now.
    expect(running.status).toBe(200);
    const busy = await loom(c, 'work', '/help');
    expect(busy).toEqual({ content: [{ type: 'text', text: env('work', 'ERROR(BUSY): Topic work is executing another command. Retry shortly.') }], isError: true });
    await running.text();
    expect((await loom(c, 'work', '/help')).isError).toBe(false);
  });

  it('when an MCP call runs on a topic, then a second MCP call on it is BUSY and another topic is not', async () => {
    const first = loom(c, 'mcp1', '/exec sleep 1');
    await untilExecuting('leo', 'mcp1');
    expect((await loom(c, 'mcp1', '/help')).content[0].text).toBe(env('mcp1', 'ERROR(BUSY): Topic mcp1 is executing another command. Retry shortly.'));
    expect((await loom(c, 'mcp2', '/help')).isError).toBe(false);
    expect((await first).isError).toBe(false);
  });

  it('when another agent uses the same topic name, then it is not BUSY (topics are per agent)', async () => {
    const first = loom(c, 'shared', '/exec sleep 1');
    await untilExecuting('leo', 'shared');
    const { client: other } = await httpClient(t.base, 'ada');
    expect((await loom(other, 'shared', '/help')).isError).toBe(false);
    await other.close();
    await first;
  });

  it('when an /exec arrives while an MCP call runs, then it is queued and answered after it', async () => {
    const first = loom(c, 'q', '/exec sleep 1');
    await untilExecuting('leo', 'q');
    const out = await t.client('leo').exec('q', '/help');
    expect(out.status).toBe(200);
    expect(out.head?.ok).toBe(true);
    expect((await first).isError).toBe(false);
  });
});

describe('agents on /mcp (spec §4.8, behaviour.md §10.1)', () => {
  it('when X-Agent-Id names an unknown valid agent, then it is registered with the default home', async () => {
    const { client } = await httpClient(t.base, 'newbie');
    await loom(client, 'main', '/help');
    await client.close();
    const agents = (await call(t.base, 'GET', '/agents')).body.agents as Array<{ id: string; home: string }>;
    expect(agents.find((a) => a.id === 'newbie')?.home).toBe(`${t.dataDir}/agents/newbie/home`);
  });

  it('when X-Agent-Id is absent, then the agent is `default`', async () => {
    const { client } = await httpClient(t.base);
    await loom(client, 'main', '/help');
    await client.close();
    const agents = (await call(t.base, 'GET', '/agents')).body.agents as Array<{ id: string }>;
    expect(agents.map((a) => a.id)).toContain('default');
  });

  it('when X-Agent-Id has blanks around it, then it is trimmed', async () => {
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, 'X-Agent-Id': ' trimmed ' }, body: rpc('ping') });
    expect(r.status).toBe(200);
    expect(t.c.system.hasAgent('trimmed')).toBe(true);
  });

  it('when X-Agent-Id is not a valid agent_id, then 400 {"error": "Invalid agent_id: <raw>"} and nothing is registered', async () => {
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, 'X-Agent-Id': 'bad/id' }, body: rpc('ping') });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({ error: 'Invalid agent_id: bad/id' });
    expect(t.c.system.hasAgent('bad/id')).toBe(false);
  });
});

describe('/mcp HTTP details (behaviour.md §10.1, §9.1)', () => {
  it.each(['GET', 'DELETE'])('when %s /mcp, then 405 with the JSON-RPC body', async (method) => {
    const r = await raw(t.port, { method, path: '/mcp' });
    expect(r.status).toBe(405);
    expect(r.body).toBe('{"jsonrpc":"2.0","error":{"code":-32000,"message":"Method not allowed."},"id":null}');
  });

  it('when PUT /mcp, then the generic 405 with an Allow header', async () => {
    const r = await raw(t.port, { method: 'PUT', path: '/mcp' });
    expect(r.status).toBe(405);
    expect(JSON.parse(r.body)).toEqual({ error: 'Method not allowed: PUT /mcp' });
    expect(r.headers.allow).toBe('POST, GET, DELETE');
  });

  it('when the body is not JSON, then 400 with a JSON-RPC parse error', async () => {
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: '{nope' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null });
  });

  it('when a refused POST names an unknown agent (not JSON, over 10 MiB), then the agent is not registered', async () => {
    const bad = await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, 'X-Agent-Id': 'junk1' }, body: '{"jsonrpc":' });
    expect(bad.status).toBe(400);
    const big = await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, 'X-Agent-Id': 'junk2', 'Content-Length': String(10485761) } });
    expect(big.status).toBe(413);
    const ids = (await call(t.base, 'GET', '/agents')).body.agents.map((a: { id: string }) => a.id);
    expect(ids.filter((id: string) => id.startsWith('junk'))).toEqual([]);
    // The same request, well formed, does register it (spec §4.8).
    expect((await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, 'X-Agent-Id': 'junk1' }, body: rpc('notifications/initialized', undefined, null) })).status).toBe(202);
    expect((await call(t.base, 'GET', '/agents')).body.agents.map((a: { id: string }) => a.id)).toContain('junk1');
  });

  it('when a notification is posted, then 202 with an empty body', async () => {
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: rpc('notifications/initialized', undefined, null) });
    expect(r.status).toBe(202);
    expect(r.body).toBe('');
  });

  it('when Content-Length passes 10 MiB, then 413 {"error": "Request body exceeds 10485760 bytes"}', async () => {
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, 'Content-Length': String(10485761) } });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ error: 'Request body exceeds 10485760 bytes' });
  });

  it('when /describe is read, then it advertises mcp {tool: loom}', async () => {
    expect((await call(t.base, 'GET', '/describe')).body.capabilities.mcp).toEqual({ tool: 'loom' });
  });
});

describe('Host and Origin checks on /mcp (behaviour.md §9.2)', () => {
  it('when Host is not loopback, then 403 Forbidden host', async () => {
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, Host: 'evil.example:8080' }, body: rpc('ping') });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toEqual({ error: 'Forbidden host: evil.example:8080' });
  });

  it('when Origin is foreign, then 403 Forbidden origin on POST, GET and DELETE', async () => {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const r = await raw(t.port, { method, path: '/mcp', headers: { ...MCP_HEADERS, Origin: 'http://evil.example' }, body: method === 'POST' ? rpc('ping') : undefined });
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body)).toEqual({ error: 'Forbidden origin: http://evil.example' });
    }
  });

  it('when Origin is `null`, then 403 (null is not loopback)', async () => {
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, Origin: 'null' }, body: rpc('ping') });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toEqual({ error: 'Forbidden origin: null' });
  });

  it.each(['http://localhost:5173', 'http://127.0.0.1', 'http://app.example:8080'])('when Origin is %s (loopback or SVC_ALLOWED_ORIGINS), then the request is served', async (origin) => {
    const r = await raw(t.port, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, Origin: origin }, body: rpc('ping') });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });
});
