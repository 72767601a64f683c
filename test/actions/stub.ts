import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** One request as the stub saw it. */
export interface Recorded {
  method: string;
  /** Path and query exactly as sent. */
  url: string;
  path: string;
  query: string;
  /** Header pairs in the order and casing they were sent. */
  headers: Array<[string, string]>;
  body: string;
}

/** A canned answer. */
export interface Canned {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer | object;
  /** Never answer (for timeouts). */
  hang?: boolean;
}

/** A loopback HTTP server that records every request and answers from a route table. */
export interface Stub {
  port: number;
  origin: string;
  requests: Recorded[];
  /** Route by `METHOD /path` or `/path` (query ignored); a function gets the request. */
  routes: Map<string, Canned | ((r: Recorded) => Canned)>;
  last(): Recorded;
  close(): Promise<void>;
}

/** Start a stub on 127.0.0.1 (port 0). Unknown routes answer 404 `{"error":"no route"}`. */
export async function startStub(): Promise<Stub> {
  const requests: Recorded[] = [];
  const routes: Stub['routes'] = new Map();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      const q = url.indexOf('?');
      const headers: Array<[string, string]> = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
      const rec: Recorded = { method: req.method ?? '', url, path: q < 0 ? url : url.slice(0, q), query: q < 0 ? '' : url.slice(q + 1), headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(rec);
      const route = routes.get(`${rec.method} ${rec.path}`) ?? routes.get(rec.path);
      const canned: Canned = typeof route === 'function' ? route(rec) : route ?? { status: 404, body: { error: 'no route' } };
      if (canned.hang) return;
      const body = canned.body === undefined ? '' : Buffer.isBuffer(canned.body) || typeof canned.body === 'string' ? canned.body : JSON.stringify(canned.body);
      const type = typeof canned.body === 'object' && !Buffer.isBuffer(canned.body) ? { 'Content-Type': 'application/json' } : {};
      res.writeHead(canned.status ?? 200, { ...type, ...(canned.headers ?? {}) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port, origin: `http://127.0.0.1:${port}`, requests, routes,
    last: () => requests[requests.length - 1],
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
