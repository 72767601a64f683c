import { request, type IncomingMessage } from 'node:http';

/** What to send: method, headers and an optional text body; `signal` aborts the request and its body. */
export interface HttpInit {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** An HTTP answer: its status, and its body read once, as text or as chunks, or dropped. */
export interface HttpAnswer {
  status: number;
  /** The Content-Type header ('' when absent). */
  contentType: string;
  text(): Promise<string>;
  json(): Promise<unknown>;
  chunks(): AsyncIterable<Buffer>;
  /** Drop the body unread (the connection closes). */
  cancel(): void;
}

/** The answer of `res` read through the HttpAnswer methods; a read cut by `signal` throws its reason (an AbortError). */
function answer(res: IncomingMessage, signal?: AbortSignal): HttpAnswer {
  const text = async (): Promise<string> => {
    const parts: Buffer[] = [];
    for await (const c of res) parts.push(c as Buffer);
    return Buffer.concat(parts).toString('utf8');
  };
  return {
    status: res.statusCode ?? 0,
    contentType: res.headers['content-type'] ?? '',
    text,
    json: async () => JSON.parse(await text()) as unknown,
    chunks: async function* () {
      try {
        for await (const c of res) yield c as Buffer;
      } catch (err) {
        throw signal?.aborted ? signal.reason : err;
      }
    },
    cancel: () => res.destroy(),
  };
}

/**
 * One HTTP/1.1 request through node:http. The client speaks to a local daemon, and fetch() would cost
 * each CLI call more than the rest of it: its first use loads undici, fetch's HTTP stack (memory and
 * CPU: bench/cli, docs/cli.md). Rejects with the socket's error (e.g. ECONNREFUSED) when nothing
 * answers; a body cut short rejects while it is read.
 */
export function httpSend(url: string, init: HttpInit, proxy: string | undefined = process.env.LOOM_PROXY): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    if (u.protocol !== 'http:') {
      reject(new Error(`unsupported URL scheme ${u.protocol} (use http://)`));
      return;
    }
    const body = init.body === undefined ? undefined : Buffer.from(init.body, 'utf8');
    const headers: Record<string, string> = { ...init.headers, ...(body ? { 'Content-Length': String(body.length) } : {}) };
    const via = viaProxy(u, proxy, headers);
    const req = request(via.target, { method: init.method, headers, signal: init.signal, ...via.options }, (res) => resolve(answer(res, init.signal)));
    req.once('error', reject);
    req.end(body);
  });
}

/**
 * Inside the agent sandbox the daemon is reached only through Loom's egress proxy (behaviour.md
 * §15.3), whose address with the agent's credential the sandbox gives as LOOM_PROXY: the request
 * then goes to the proxy in absolute form with Proxy-Authorization. Anywhere else, directly.
 */
function viaProxy(u: URL, proxy: string | undefined, headers: Record<string, string>): { target: URL; options: { path?: string; headers?: Record<string, string> } } {
  if (!proxy) return { target: u, options: {} };
  let p: URL;
  try {
    p = new URL(proxy);
  } catch {
    return { target: u, options: {} };
  }
  if (p.username !== '') {
    headers['Proxy-Authorization'] = `Basic ${Buffer.from(`${decodeURIComponent(p.username)}:${decodeURIComponent(p.password)}`).toString('base64')}`;
  }
  headers.Host = u.host;
  return { target: new URL(`http://${p.host}`), options: { path: u.href } };
}
