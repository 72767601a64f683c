import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** One request the fake daemon saw. */
export interface SeenRequest {
  method: string;
  path: string;
  agent?: string;
  body: string;
}

/**
 * A loopback stand-in for the daemon's HTTP surface that `loom mcp` touches: /health, POST /agents,
 * POST /exec (answered by `exec`) and GET /events/stream (answered by `stream`, one call per
 * connection). Used where the real route is not the thing under test (the event stream belongs to
 * another area; status mappings need answers a healthy daemon never gives).
 */
export interface FakeDaemon {
  port: number;
  seen: SeenRequest[];
  close(): Promise<void>;
}

export type FakeHandler = (req: IncomingMessage, res: ServerResponse, nth: number) => void;

export async function startFakeDaemon(opts: { exec?: FakeHandler; stream?: FakeHandler }): Promise<FakeDaemon> {
  const seen: SeenRequest[] = [];
  let execs = 0;
  let streams = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      const agent = req.headers['x-agent-id'];
      seen.push({ method: req.method ?? '', path, agent: Array.isArray(agent) ? agent[0] : agent, body: Buffer.concat(chunks).toString('utf8') });
      if (path === '/health') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true,"agents":0,"sessions":0}');
      if (path === '/agents' && req.method === 'POST') {
        const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { agent_id: string }).agent_id;
        return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ agent_id: id, home: `/tmp/${id}`, created: true }));
      }
      if (path === '/exec' && opts.exec) return opts.exec(req, res, ++execs);
      if (path === '/events/stream' && opts.stream) return opts.stream(req, res, ++streams);
      res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: `Not found: ${req.method} ${path}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as { port: number }).port,
    seen,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** Write SSE headers and events. */
export function sse(res: ServerResponse, events: Array<[string, unknown]>): void {
  if (!res.headersSent) res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  for (const [name, data] of events) res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}
