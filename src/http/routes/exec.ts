import type { Express } from 'express';
import type { ExecResult } from '../../actors/system.js';
import { LoomError } from '../../domain/errors.js';
import { CMD_DISPLAY_CHARS, REQUEST_ID_MAX, RUNNING_COMMENT_MS } from '../../domain/limits.js';
import { parseTopic } from '../../domain/topic.js';
import type { AppContext } from '../context.js';
import { readJsonObject } from '../body.js';
import { agentHeader, route } from '../route.js';
import { SseWriter } from '../sse.js';
import { commandWord } from '../../domain/requestLog.js';
import { noteRequest } from '../requestLog.js';

/** behaviour.md §1.5: the first line of cmd, cut to 199 characters + `…` past 200. */
export function cmdDisplay(cmd: string): string {
  const first = cmd.replace(/\r\n/g, '\n').split('\n')[0].trim();
  const chars = [...first];
  return chars.length > CMD_DISPLAY_CHARS ? chars.slice(0, CMD_DISPLAY_CHARS - 1).join('') + '…' : first;
}

/** The content string of spec §4.7: `re: [<request_id>] <cmd>` then the body. */
export function contentString(display: string, requestId: string | null, body: string): string {
  return `re: ${requestId !== null ? `[${requestId}] ` : ''}${display}\n${body}`;
}

/** Validate request_id (behaviour.md §1.2): optional string 1–256 chars; `""` counts as absent. */
export function parseRequestId(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || [...v].length > REQUEST_ID_MAX) throw new LoomError(400, 'Invalid request_id');
  return v;
}

/** POST /exec (spec §4.7; behaviour.md §9.4 check order). */
export function mountExec(app: Express, ctx: AppContext): void {
  route(app, '/exec', {
    POST: async (req, res) => {
      const agentId = agentHeader(req);
      if (agentId === undefined) throw new LoomError(400, 'X-Agent-Id header required');
      if (!ctx.system.deps.agents.get(agentId)) throw new LoomError(401, `Unknown agent: ${agentId}`);
      const body = await readJsonObject(req, 'Invalid JSON body — expected {"cmd": "/…", "topic": "…"}');
      const cmd = body.cmd;
      if (typeof cmd !== 'string' || cmd.trim() === '') throw new LoomError(400, 'Empty command — provide a non-empty "cmd"');
      if (!cmd.trim().startsWith('/')) throw new LoomError(400, 'Command must start with /');
      if (body.topic === undefined || body.topic === null) throw new LoomError(400, 'topic required');
      const ref = parseTopic(body.topic);
      if (!ref) throw new LoomError(400, `Invalid topic: ${String(body.topic)}`);
      const requestId = parseRequestId(body.request_id);
      noteRequest(res, { topic: ref.topic, command: commandWord(cmd), request_id: requestId });
      const display = cmdDisplay(cmd);
      const sse = new SseWriter(res);
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      await new Promise<void>((done) => {
        // Only the header is trimmed (behaviour.md §2.1): a body keeps its trailing newline.
        const handle = ctx.system.submit(agentId, ref, cmd.trimStart(), {
          onStart: () => {
            sse.open();
            timer = setInterval(() => { if (!sse.closed) sse.comment('running'); }, RUNNING_COMMENT_MS);
          },
          onRefuse: (reason) => {
            settled = true;
            if (reason === 'QUEUE_FULL') res.status(429).json({ error: 'QUEUE_FULL', message: `Topic ${ref.topic} already has ${ctx.system.deps.queue?.max ?? 5} commands waiting.` });
            else if (reason === 'QUEUE_TIMEOUT') res.status(504).json({ error: 'QUEUE_TIMEOUT', message: `Waited ${ctx.system.deps.queue?.waitMs ?? 120000} ms in the queue of topic ${ref.topic}.` });
            done();
          },
          onResult: (raw) => {
            settled = true;
            clearInterval(timer);
            const r = raw as ExecResult;
            // A client that left while its command ran does not cancel it; the result is discarded.
            if (!sse.closed) {
              sse.finish([
                ['head', { ok: r.ok, code: r.code, cmd: display, request_id: requestId, agent_id: agentId, topic: r.topic, topic_type: r.topicType, meta: r.meta }],
                ['content', contentString(display, requestId, r.body)],
                ['done', {}],
              ]);
            }
            done();
          },
        }, 'queue');
        res.on('close', () => {
          if (settled) return;
          clearInterval(timer);
          handle.leave();
          // A queued client that left gets no response; a running command goes on (behaviour.md §9.4).
          done();
        });
      });
    },
  });
}
