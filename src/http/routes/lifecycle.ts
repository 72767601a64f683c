import type { Express } from 'express';
import { FIELD_FILE_BYTES, FS_MAX_BYTES, REQUEST_BODY_BYTES, WEBHOOK_BODY_BYTES } from '../../domain/limits.js';
import type { LimitName } from '../../domain/wire.js';
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
  // The values of every /describe limit; the wire says which it shows (behaviour.md §9.3, §11).
  const limits: Record<LimitName, number> = {
    'fs.max_bytes': FS_MAX_BYTES, request_body_bytes: REQUEST_BODY_BYTES, webhook_body_bytes: WEBHOOK_BODY_BYTES,
    queue_max: ctx.system.limits.max, queue_wait_ms: ctx.system.limits.waitMs, field_file_bytes: FIELD_FILE_BYTES,
  };
  route(app, '/describe', {
    GET: (req, res) => {
      const { info } = ctx.system.services;
      sendJson(req, res, 200, {
        name: 'loom', version: info.version, protocol: '0.1', wire: info.wire,
        instance: { role: info.role, label: info.label },
        capabilities: ctx.system.describeCapabilities(),
        limits: Object.fromEntries(wire.limits.map((name) => [name, limits[name]])),
        // behaviour.md §15 (beyond spec): on the agent wire only, whose /describe lists extensions.
        ...(wire.featureCapabilities ? { sandbox: { ...(info.sandboxSupport?.() ?? { available: false, mechanism: 'landlock', abi: 0 }), default: info.sandbox ?? 'none' } } : {}),
        // behaviour.md §17: which native parts this daemon has, and why one is missing.
        ...(wire.featureCapabilities && info.nativeParts ? { native: info.nativeParts() } : {}),
      });
    },
  });
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
