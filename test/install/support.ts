import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import type { Installs } from '../../src/services/installs.js';
import { bench, type CommandBench } from '../commands/support.js';

/** One request a loopback server saw. */
export interface Seen {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A handler of one path: full control of the response (cut connections, slow bodies, redirects). */
export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A loopback HTTP server for install tests (manifests, package files, a fake GitHub API). */
export interface FileServer {
  port: number;
  origin: string;
  url(path: string): string;
  requests: Seen[];
  routes: Map<string, Handler>;
  /** Answers paths without a route (404 when unset). */
  fallback: Handler | null;
  /** Paths requested so far (query stripped), in order. */
  paths(): string[];
  close(): Promise<void>;
}

/** A handler answering `body` with a status and content type. */
export function send(body: string | Buffer | object, o: { status?: number; type?: string; headers?: Record<string, string> } = {}): Handler {
  const data = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const type = o.type ?? (typeof body === 'object' && !Buffer.isBuffer(body) ? 'application/json' : 'text/markdown; charset=utf-8');
  return (_req, res) => {
    res.writeHead(o.status ?? 200, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(data), ...(o.headers ?? {}) });
    res.end(data);
  };
}

/** Start a server on 127.0.0.1:0; unknown paths answer 404. */
export async function startFileServer(): Promise<FileServer> {
  const requests: Seen[] = [];
  const routes = new Map<string, Handler>();
  const self = { fallback: null as Handler | null };
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    requests.push({ method: req.method ?? '', path, query: q < 0 ? '' : url.slice(q + 1), headers: req.headers });
    const h = routes.get(path) ?? self.fallback;
    if (h) h(req, res);
    else send('no such file', { status: 404, type: 'text/plain' })(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const origin = `http://127.0.0.1:${port}`;
  return Object.assign(self, {
    port, origin, requests, routes,
    url: (p: string) => origin + p,
    paths: () => requests.map((r) => r.path),
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  });
}

/**
 * A hash of a whole tree: every entry's relative path, kind, permission bits and content (symlinks
 * by target). Two trees hash alike exactly when they are byte-identical with the same modes.
 */
export function hashTree(dir: string): string {
  if (!existsSync(dir)) return 'missing';
  const h = createHash('sha256');
  const visit = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      const p = join(abs, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(p);
      h.update(`${r}\0${st.mode.toString(8)}\0`);
      if (st.isSymbolicLink()) h.update(`link:${readlinkSync(p)}\0`);
      else if (st.isDirectory()) visit(p, r);
      else h.update(readFileSync(p));
    }
  };
  visit(dir, '');
  return h.digest('hex');
}

/** Entries of `~/packages` that are leftovers of installs (`.staging-*`, `.old-*`, `.new-*`). */
export function leftovers(home: string): string[] {
  const dir = join(home, 'packages');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => /^\.(staging|old|new)-/.test(n));
}

/** Write files (relative path → text) under `root`. */
export function writeTree(root: string, files: Record<string, string | Buffer>): string {
  for (const [rel, text] of Object.entries(files)) {
    const p = join(root, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
  }
  return root;
}

/** An in-process daemon with agent `leo` and its install service (to shorten fetch timeouts). */
export interface InstallBench extends CommandBench {
  installs: Installs;
}

/** Start an InstallBench (`env` goes to the daemon's configuration, e.g. SVC_GITHUB_API). */
export async function installBench(agentId = 'leo', env?: Record<string, string>): Promise<InstallBench> {
  const b = await bench({ agentId, env });
  return Object.assign(b, { installs: b.t.c.system.services.installs as Installs });
}

/** A manifest JSON body. */
export function manifest(files: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): object {
  return { files, ...extra };
}
