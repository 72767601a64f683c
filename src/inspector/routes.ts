import type { Express, Response } from 'express';
import type { Inspection } from '../services/inspection.js';
import { LoomError } from '../domain/errors.js';
import type { AppContext } from '../http/context.js';
import { route } from '../http/route.js';
import type { Asset } from './assets.js';
import { sendJson } from '../http/jsonAnswer.js';

/**
 * The page may load only its own files and talk only to its own daemon: no CDN, no other origin
 * (behaviour.md §13.1). `connect-src 'self'` covers the same-origin WebSocket.
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function sendAsset(res: Response, a: Asset): void {
  res.setHeader('Content-Type', a.type);
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', CSP);
  res.end(a.body);
}

/**
 * The inspector's HTTP routes (behaviour.md §13.1): the page, its assets, the snapshot and the
 * machine definitions. All behind the app's Host/Origin guard; read-only.
 */
export function inspectorRoutes(inspection: Inspection, files: () => { page: Asset; assets: Map<string, Asset> }) {
  return (app: Express, _ctx: AppContext): void => {
    route(app, '/inspect', { GET: (_req, res) => sendAsset(res, files().page) });
    route(app, '/inspect/state', { GET: (req, res) => { sendJson(req, res, 200, inspection.state()); } });
    route(app, '/inspect/machines', { GET: (req, res) => { sendJson(req, res, 200, inspection.machines()); } });
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
