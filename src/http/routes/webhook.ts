import type { Express } from 'express';
import { IntakeRefused, type EventsService } from '../../services/events.js';
import { LoomError } from '../../domain/errors.js';
import { WEBHOOK_BODY_BYTES } from '../../domain/limits.js';
import { readBody, tooLarge } from '../body.js';
import type { AppContext } from '../context.js';
import { route, type Handler } from '../route.js';
import { sendJson } from '../jsonAnswer.js';

/** spec §4.4 / §7 texts. */
const UNKNOWN_TOKEN = 'Unknown webhook token';
const EMPTY_BODY = 'Webhook body must be non-empty text';
const TOO_LARGE = `Webhook body exceeds ${WEBHOOK_BODY_BYTES} bytes`;

const unknownToken = (close = false) => new LoomError(401, UNKNOWN_TOKEN, close ? { headers: { Connection: 'close' } } : {});

/**
 * Strict UTF-8 that keeps a leading BOM, so the stored text is exactly the bytes posted. Without
 * `stream: true` every decode call is complete and independent, so one decoder serves all requests.
 */
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The webhook text: valid UTF-8 and not empty or whitespace-only (behaviour.md §9.7), else 400. */
export function webhookText(body: Buffer): string {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw new LoomError(400, EMPTY_BODY);
  }
  if (text.trim() === '') throw new LoomError(400, EMPTY_BODY);
  return text;
}

/**
 * POST /webhook/{token} (spec §4.4; check order of behaviour.md §9.7: token → size → content) and
 * GET/POST /agents/{id}/webhook (spec §4.3, behaviour.md §9.5). The 202 is sent only after the
 * event is on disk.
 */
export function webhookRoutes(events: EventsService) {
  return (app: Express, ctx: AppContext): void => {
    route(app, '/webhook/:token', {
      POST: async (req, res) => {
        const token = String(req.params.token);
        const agentId = events.webhooks.lookup(token);
        if (agentId === undefined) {
          // Drain (up to the webhook cap) before answering so the client reads the 401, not a reset.
          await readBody(req, WEBHOOK_BODY_BYTES, () => unknownToken(true));
          throw unknownToken();
        }
        const text = webhookText(await readBody(req, WEBHOOK_BODY_BYTES, () => tooLarge(WEBHOOK_BODY_BYTES, TOO_LARGE)));
        let event;
        try {
          event = await events.intake(agentId, token, text);
        } catch (err) {
          if (err instanceof IntakeRefused) throw unknownToken();
          throw err;
        }
        sendJson(req, res, 202, { ok: true, agent_id: event.agentId, event_id: event.id });
      },
    });
    const agentWebhook = (rotate: boolean): Handler => async (req, res) => {
      const id = String(req.params.id);
      if (!ctx.system.hasAgent(id)) throw new LoomError(404, `Unknown agent: ${id}`);
      const url = rotate ? await events.rotateWebhook(id) : await events.showWebhook(id);
      sendJson(req, res, 200, { agent_id: id, webhook_url: url });
    };
    route(app, '/agents/:id/webhook', { GET: agentWebhook(false), POST: agentWebhook(true) });
  };
}
