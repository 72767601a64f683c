import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';
import { LoomError } from '../domain/errors.js';
import { renderError } from '../http/errors.js';
import { hostOriginRefusal } from '../http/guard.js';
import { sendJson } from '../http/jsonAnswer.js';
import { upgradeListener } from '../http/upgrade.js';
import { loadAssets, type Asset } from './assets.js';
import { recordedSource, type RecordedSource } from './recordedFile.js';
import { sendAsset } from './routes.js';

/** A running offline server of one recorded file. */
export interface OfflineInspector {
  /** The page's URL: `http://127.0.0.1:<port>/inspect`. */
  url: string;
  source: RecordedSource;
  /** Stop listening and end every open connection. */
  close(): Promise<void>;
}

/** `/describe` of the offline server: who is answering and what it serves (the page reads `recorded`). */
function describe(source: RecordedSource, file: string): Record<string, unknown> {
  return { name: 'loom', version: source.loomVersion, recorded: { at: source.recordedAt, kind: source.kind, file: basename(file) } };
}

/** The path of a request target, without the query (never decoded: the table holds exact paths). */
const pathOf = (url: string | undefined) => (url ?? '/').split('?')[0];

/** Answer one request of the page, read-only: GET and HEAD only, from fixed tables. */
function answer(req: IncomingMessage, res: ServerResponse, source: RecordedSource, files: { page: Asset; assets: Map<string, Asset> }, about: Record<string, unknown>): void {
  // The daemon's own Host/Origin guard (behaviour.md §9.2): a page of another site may not read the file.
  const refusal = hostOriginRefusal(req, []);
  if (refusal) throw refusal;
  const path = pathOf(req.url);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    throw new LoomError(405, `Method not allowed: ${req.method ?? ''} ${path}`, { message: 'this inspector is read-only', headers: { Allow: 'GET, HEAD' } });
  }
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  if (path === '/') {
    res.writeHead(302, { Location: source.page }).end();
    return;
  }
  if (path === '/inspect') return sendAsset(res, files.page);
  if (path.startsWith('/inspect/assets/')) {
    const a = files.assets.get(path.slice('/inspect/assets/'.length));
    if (!a) throw new LoomError(404, `Not found: GET ${path}`);
    return sendAsset(res, a);
  }
  if (path === '/describe') return sendJson(req, res, 200, about);
  if (path === '/health') return sendJson(req, res, 200, { ok: true });
  if (source.json.has(path)) return sendJson(req, res, 200, source.json.get(path));
  throw new LoomError(404, `Not found: GET ${path}`);
}

/**
 * Serve the inspector page for a recorded source on 127.0.0.1 (behaviour.md §13.8): the page, its
 * assets, `/describe` (with `recorded`), and the source's JSON, read-only, behind the daemon's
 * Host/Origin guard. There is no WebSocket: an upgrade passes the guard and gets 404, and the page,
 * seeing `recorded` in `/describe`, never asks for one.
 */
export async function serveRecorded(source: RecordedSource, file: string, port = 0): Promise<OfflineInspector> {
  const files = loadAssets();
  const about = describe(source, file);
  const server = createServer((req, res) => {
    try {
      answer(req, res, source, files, about);
    } catch (err) {
      renderError(req, res, err);
    }
  });
  server.on('upgrade', upgradeListener([], new Map()));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}${source.page}`,
    source,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** `loom inspect <file>`: read and check the file, then serve it (the CLI's one way in, loaded when that command runs). */
export async function openRecordedFile(file: string, port = 0): Promise<OfflineInspector> {
  return serveRecorded(await recordedSource(file), file, port);
}
