import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { DaemonUnreachable, LoomClient, type ExecOutcome } from '../client/index.js';
import type { TopicRef } from '../domain/topic.js';
import { TOOL_CAPABILITIES, TOOL_CONFIG } from '../domain/mcpSchema.js';
import { TOOL_NAME, busyText, callTool, type ToolOutcome, type ToolRunner } from '../domain/mcpTool.js';
import { VERSION } from '../version.js';
import { cliPort, dataDir, type GlobalOpts } from './common.js';
import { CHANNEL_CAPABILITY, CHANNEL_METHOD, forwardEvents } from './mcpChannel.js';

/** How long `loom mcp` waits for a daemon it started (behaviour.md §10.4). */
const DAEMON_START_MS = 10000;

/** Map one /exec outcome to the tool's outcome (behaviour.md §10.4 mapping). */
export function execToOutcome(ref: TopicRef, out: ExecOutcome): ToolOutcome {
  const fail = (body: string): ToolOutcome => ({ ok: false, topic: ref.topic, body });
  if (out.status === 429) return fail(`ERROR(QUEUE_FULL): ${out.error?.message ?? out.error?.error ?? ''}`);
  if (out.status === 504) return fail(`ERROR(QUEUE_TIMEOUT): ${out.error?.message ?? out.error?.error ?? ''}`);
  if (out.status !== 200) return fail(`ERROR(INTERNAL_ERROR): daemon answered HTTP ${out.status}: ${out.error?.error ?? ''}`);
  if (out.incomplete || !out.head) return fail("ERROR(STREAM_INCOMPLETE): the daemon's answer was cut off");
  return { ok: out.head.ok, topic: out.head.topic ?? ref.topic, body: out.body ?? '', code: out.head.code };
}

/**
 * The bridge's runner: BUSY when a call of this process already runs on the topic (behaviour.md
 * §10.4), else POST /exec. The daemon queues an /exec behind a running command, so the per-process
 * check is what keeps one host from stacking calls on one topic.
 */
export function bridgeRunner(client: LoomClient): ToolRunner {
  const running = new Set<string>();
  return async (ref, cmd) => {
    if (running.has(ref.topic)) return { ok: false, topic: ref.topic, body: busyText(ref.topic) };
    running.add(ref.topic);
    try {
      return execToOutcome(ref, await client.exec(ref.topic, cmd));
    } catch (err) {
      const why = err instanceof DaemonUnreachable ? `daemon not reachable (${err.message}); start it with: loom start` : (err as Error).message;
      return { ok: false, topic: ref.topic, body: `ERROR(INTERNAL_ERROR): ${why}` };
    } finally {
      running.delete(ref.topic);
    }
  };
}

/** How long one /health probe may take before the port counts as not answering. */
const HEALTH_TIMEOUT_MS = 2000;

/**
 * GET /health answered 200. A peer that accepts and drops connections can leave the request pending with
 * nothing keeping the process alive, so the probe races a (ref'd) timer.
 */
async function healthy(client: LoomClient): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS); });
  // Unreachable, or something that is not Loom (not JSON): either way no daemon of ours answers.
  const probe = client.health().then((r) => r.status === 200, () => false);
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * GET /health; when it fails, start `loom daemon` detached with the same environment (its output
 * goes to `<data>/loom.log`, never to our stdout, which carries MCP) and wait up to 10 s.
 */
export async function ensureDaemon(client: LoomClient, opts: GlobalOpts, waitMs = DAEMON_START_MS): Promise<boolean> {
  if (await healthy(client)) return true;
  mkdirSync(dataDir(), { recursive: true, mode: 0o700 });
  const log = openSync(join(dataDir(), 'loom.log'), 'a', 0o600);
  const main = fileURLToPath(new URL('./main.js', import.meta.url));
  const args = [main, 'daemon', ...(opts.port ? ['--port', opts.port] : [])];
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', log, log], env: process.env });
  closeSync(log);
  child.unref();
  let exited = false;
  child.once('exit', () => { exited = true; });
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    if (await healthy(client)) return true;
    // A daemon that exited (bad config, port taken) will not answer; one more look covers a
    // concurrent start by another process that won the port.
    if (exited) return healthy(client);
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** `loom mcp [--agent id] [--channel]` (behaviour.md §10.4): the tool over stdio, forwarding to the daemon. */
export async function runMcp(opts: GlobalOpts, channel: boolean): Promise<number> {
  const agentId = opts.agent ?? (process.env.LOOM_AGENT_ID || 'default');
  const base = `http://127.0.0.1:${cliPort(opts)}`;
  const plain = new LoomClient(base);
  if (!(await ensureDaemon(plain, opts))) {
    process.stderr.write('loom: daemon did not start\n');
    return 1;
  }
  // Register without `home`, so an existing agent's home is never clobbered.
  const reg = await plain.registerAgent({ agent_id: agentId });
  if (reg.status !== 200) {
    process.stderr.write(`loom: ${String((reg.body as { error?: unknown }).error)}\n`);
    return 1;
  }
  const client = new LoomClient(base, agentId);
  // The same tool as POST /mcp (src/mcp/server.ts), from the shared domain contract.
  const server = new McpServer({ name: TOOL_NAME, version: VERSION }, channel ? { capabilities: { experimental: { [CHANNEL_CAPABILITY]: {} } } } : undefined);
  const run = bridgeRunner(client);
  server.registerTool(TOOL_NAME, TOOL_CONFIG, async (args) => callTool(args, run));
  server.server.registerCapabilities(TOOL_CAPABILITIES);
  const transport = new StdioServerTransport();
  const stop = new AbortController();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    // The host closing our stdin ends the session; the transport itself does not watch for it.
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  if (channel) {
    server.server.oninitialized = () => {
      void forwardEvents({
        agentId,
        signal: stop.signal,
        open: (signal) => client.eventStream(signal),
        notify: (params) => transport.send({ jsonrpc: '2.0', method: CHANNEL_METHOD, params }),
        onError: (err) => process.stderr.write(`loom mcp: event stream: ${(err as Error).message}\n`),
      });
    };
  }
  await server.connect(transport);
  const answered = trackRequests(transport);
  await closed;
  // Calls still running when the host closed stdin (a piped script ends right after its last
  // request) are answered before the bridge exits.
  await answered();
  stop.abort();
  await server.close();
  return 0;
}

/**
 * Count the requests the transport delivers and the answers it sends, through its public
 * `onmessage` and `send`; the returned function resolves once every request received has its answer.
 */
function trackRequests(transport: StdioServerTransport): () => Promise<void> {
  const open = new Set<string | number>();
  let wake: (() => void) | null = null;
  const deliver = transport.onmessage;
  transport.onmessage = (msg) => {
    if ('method' in msg && 'id' in msg) open.add(msg.id);
    deliver?.(msg);
  };
  const send = transport.send.bind(transport);
  transport.send = async (msg) => {
    await send(msg);
    if (!('method' in msg) && 'id' in msg && msg.id !== undefined) {
      open.delete(msg.id);
      if (open.size === 0) wake?.();
    }
  };
  return async () => {
    while (open.size > 0) await new Promise<void>((resolve) => { wake = resolve; });
  };
}
