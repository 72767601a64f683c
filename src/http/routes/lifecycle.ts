import type { Express } from 'express';
import { describeDocument } from '../../services/describe.js';
import type { AppContext } from '../context.js';
import { route, type Handler } from '../route.js';
import { sendJson } from '../jsonAnswer.js';

/** GET /health, GET /describe, POST /shutdown (spec §4.6a, §4.9; behaviour.md §9.3). */
export function mountLifecycle(app: Express, ctx: AppContext): void {
  const { wire } = ctx;
  route(app, '/health', {
    GET: (req, res) => {
      const { agents, sessions } = ctx.system.counts();
      sendJson(req, res, 200, { ok: true, [wire.listField]: agents, sessions });
    },
  });
  route(app, '/describe', { GET: (req, res) => sendJson(req, res, 200, describeDocument(ctx.system, wire)) });
  // The URL every command prints: a browser goes on to the inspector page, anything else gets a
  // small index of where to go (behaviour.md §13.7).
  const root: Handler = (req, res) => {
    if (/\btext\/html\b/i.test(req.get('accept') ?? '')) {
      res.redirect(302, '/inspect');
      return;
    }
    sendJson(req, res, 200, { name: 'loom', inspect: '/inspect', describe: '/describe', health: '/health' });
  };
  route(app, '/', { GET: root, HEAD: root });
  route(app, '/shutdown', {
    POST: (req, res) => {
      res.on('finish', () => ctx.onShutdown());
      sendJson(req, res, 200, { ok: true, message: 'loom shutting down' });
    },
  });
}
