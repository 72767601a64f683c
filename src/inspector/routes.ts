import type { ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { Inspection } from '../services/inspection.js';
import { LoomError } from '../domain/errors.js';
import type { AppContext } from '../http/context.js';
import { route } from '../http/route.js';
import type { Asset } from './assets.js';
import { sendJson } from '../http/jsonAnswer.js';
import { bundleFileName, inspectorBundle } from './bundle.js';

/**
 * The page may load only its own files and talk only to its own daemon: no CDN, no other origin
 * (behaviour.md §13.1). `connect-src 'self'` covers the same-origin WebSocket.
 */
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Send one of the page's files with the page's headers (the daemon and `loom inspect <file>` alike). */
export function sendAsset(res: ServerResponse, a: Asset): void {
  res.setHeader('Content-Type', a.type);
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', CSP);
  res.end(a.body);
}

/**
 * The inspector's HTTP routes (behaviour.md §13.1, §13.8): the page, its assets, the snapshot, the
 * machine definitions and the bundle of both (export). All behind the app's Host/Origin guard; read-only.
 */
export function inspectorRoutes(inspection: Inspection, files: () => { page: Asset; assets: Map<string, Asset> }) {
  return (app: Express, _ctx: AppContext): void => {
    route(app, '/inspect', { GET: (_req, res) => sendAsset(res, files().page) });
    route(app, '/inspect/state', { GET: (req, res) => { sendJson(req, res, 200, inspection.state()); } });
    route(app, '/inspect/machines', { GET: (req, res) => { sendJson(req, res, 200, inspection.machines()); } });
    route(app, '/inspect/export', {
      GET: (req, res) => {
        const bundle = inspectorBundle(inspection.state(), inspection.machines());
        res.setHeader('Content-Disposition', `attachment; filename="${bundleFileName(bundle.exported_at)}"`);
        sendJson(req, res, 200, bundle);
      },
    });
    route(app, '/inspect/assets/{*name}', {
      GET: (req, res) => {
        const name = req.path.slice('/inspect/assets/'.length);
        const a = files().assets.get(name);
        if (!a) throw new LoomError(404, `Not found: GET ${req.path}`);
        sendAsset(res, a);
      },
    });
  };
}
