import { LoomClient } from '../client/index.js';
import { cmdDisplay, contentBody, contentString } from '../domain/output.js';
import type { ExecStep, Expect, FileStep, WebhookStep } from '../domain/trace.js';
import { expandEnvRefs, expandPort, mapIds, scrub, type Secret } from '../domain/traceText.js';
import { writeHomeFile } from './homeFile.js';
import type { ExecTransport } from './http.js';

/** Where a replay sends its steps. */
export interface Target {
  url: string;
  port: number;
  /** `${env:NAME}` values: `--set` first, then the replay's environment. */
  lookup(name: string): string | undefined;
  /** Every value the trace refers to as `${env:NAME}` that the replay knows (scrubbed from answers). */
  secrets: Secret[];
  /** Recorded id → the id this replay got in its place (evt_…, cap_…): put into later commands. */
  ids: Map<string, string>;
  /** The (mapped) agent's home, registering the agent if missing. */
  agentHome(agentId: string): Promise<string>;
  /** POST /exec over keep-alive node:http (the hot path of a replay). */
  http: ExecTransport;
}

/** A step could not be sent (a missing `${env:NAME}`, a refused registration): the reason, nothing sent. */
export class NotSent extends Error {}

function expand(text: string, target: Target): string {
  const r = expandEnvRefs(text, target.lookup);
  if (!r.ok) throw new NotSent(`\${env:${r.missing}} is not set: export ${r.missing}=… or pass --set ${r.missing}=…`);
  return expandPort(r.cmd, target.port);
}

const xmlUnescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The MCP answer as a step's `expect` (ok, code from its `ERROR(<CODE>):`, topic from the envelope). */
function mcpAnswer(text: string, isError: boolean): Expect {
  const m = /^<loom topic="([^"]*)">\n(?:ERROR\(([A-Z0-9_]+)\): )?/.exec(text);
  return { status: 200, head: { ok: !isError, code: isError ? m?.[2] ?? null : null, topic: m ? xmlUnescape(m[1]) : '' }, content: text };
}

/**
 * Send one exec step (behaviour.md §14.3) through /exec or /mcp as recorded, and return the answer
 * in trace form: scrubbed like the recorder scrubs (secrets, home, port), with the `re:` line in the
 * step's own form when `${env:…}` values were put into the command.
 */
export async function sendExec(step: ExecStep, agentId: string, target: Target): Promise<Expect> {
  const home = await target.agentHome(agentId);
  const withValues = expandEnvRefs(step.cmd, target.lookup);
  const cmd = mapIds(expand(step.cmd, target), target.ids);
  let actual: Expect;
  if (step.via === 'mcp') {
    const r = await new LoomClient(target.url, agentId).mcpCall(step.topic, cmd);
    actual = r.text !== undefined ? mcpAnswer(r.text, r.isError === true) : { status: r.status, error: { error: r.raw ?? '' } };
  } else {
    const r = await target.http.exec(agentId, step.topic, cmd, step.request_id);
    actual = r.status !== 200 ? { status: r.status, ...(r.error ? { error: { ...r.error } } : {}) } : { status: 200 };
    if (r.head) actual.head = { ok: r.head.ok, code: r.head.code, topic: r.head.topic, topic_type: r.head.topic_type, meta: r.head.meta };
    if (r.content !== undefined) {
      const changed = withValues.ok && withValues.cmd !== step.cmd;
      actual.content = changed ? contentString(cmdDisplay(step.cmd), step.request_id ?? null, contentBody(r.content)) : r.content;
    }
  }
  const answer = scrubAnswer(actual, { home, port: target.port, secrets: target.secrets });
  // Run as another agent (--agent-map): its name in the answers reads as the recorded one.
  if (agentId !== step.agent_id && answer.content !== undefined) answer.content = renameAgent(answer.content, agentId, step.agent_id);
  return answer;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function renameAgent(text: string, from: string, to: string): string {
  return text.replace(new RegExp(`(?<![A-Za-z0-9._-])${escapeRe(from)}(?![A-Za-z0-9_-])`, 'g'), to);
}

function scrubAnswer(a: Expect, ctx: Parameters<typeof scrub>[1]): Expect {
  const out: Expect = { ...a };
  if (out.content !== undefined) out.content = scrub(out.content, ctx);
  if (out.head?.meta?.uri !== undefined) out.head = { ...out.head, meta: { ...out.head.meta, uri: scrub(out.head.meta.uri, ctx) } };
  if (out.error) out.error = Object.fromEntries(Object.entries(out.error).map(([k, v]) => [k, typeof v === 'string' ? scrub(v, ctx) : v]));
  return out;
}

/** Post a webhook step's text to the (mapped) agent's webhook (created if missing); the status. */
export async function sendWebhook(step: WebhookStep, agentId: string, target: Target): Promise<Expect> {
  await target.agentHome(agentId);
  const text = expand(step.text, target);
  const client = new LoomClient(target.url);
  const hook = await client.webhook(agentId);
  if (hook.status !== 200) throw new NotSent(`GET /agents/${agentId}/webhook answered ${hook.status}`);
  const r = await client.postWebhook(hook.body.webhook_url, text);
  return { status: r.status };
}

/**
 * Write a file step under the (mapped) agent's home before the next step (behaviour.md §14.2). Any
 * refusal (a symlink below the home, a folder in the way, the file system's own error) fails the step
 * with one line naming its path; nothing is written outside the home.
 */
export async function writeFileStep(step: FileStep, agentId: string, target: Target): Promise<void> {
  const home = await target.agentHome(agentId);
  // Values first: a missing ${env:NAME} fails the step before any folder is created.
  const content = expand(step.content, target);
  try {
    writeHomeFile(home, step.path, content);
  } catch (err) {
    throw new NotSent(`file step ${step.path}: ${(err as Error).message}`);
  }
}
