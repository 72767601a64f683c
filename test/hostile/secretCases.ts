import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';

/**
 * The secrets of behaviour.md §13.4 as an agent would plant them: each kind of secret in each
 * encoding, with a fresh secret per case so a leak names the case it came from. Shared by the
 * reader matrix (secretReaders.e2e.test.ts).
 */

/** How the secret is written into the agent's text. */
export type Encoding = 'plain' | 'percent' | 'url-path' | 'url-query';
export const ENCODINGS: readonly Encoding[] = ['plain', 'percent', 'url-path', 'url-query'];

/** Where the value of a value kind lives: the agent's env store or the topic's session. */
export type ValueKind = 'env' | 'session' | null;

/** One kind of secret: how a phrase holding `core` is written, `core` being the part that must never show. */
interface Kind {
  name: string;
  core: () => string;
  phrase: (core: string, enc: Encoding) => string;
  value: ValueKind;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** `n` random letters and digits. */
const alnum = (n: number) => [...randomBytes(n)].map((b) => ALNUM[b % ALNUM.length]).join('');
/** The credential query parameter names, one per encoding (behaviour.md §13.4 lists them). */
const QUERY_NAME: Record<Encoding, string> = { plain: 'access_token', percent: 'token', 'url-path': 'secret', 'url-query': 'password' };

export const KINDS: readonly Kind[] = [
  { name: 'capability secret', core: () => alnum(43), phrase: (c) => `caps_${c}`, value: null },
  { name: 'webhook token', core: () => alnum(43), phrase: (c) => `wh_${c}`, value: null },
  { name: 'webhook URL', core: () => `cred${alnum(20)}`, phrase: (c) => `http://127.0.0.1:9/webhook/${c}`, value: null },
  { name: 'Authorization Bearer', core: () => `eyJ${alnum(20)}.${alnum(12)}`, phrase: (c) => `Authorization: Bearer ${c}`, value: null },
  { name: 'GitHub token', core: () => alnum(36), phrase: (c) => `ghp_${c}`, value: null },
  { name: 'GitHub fine-grained token', core: () => `11${alnum(20)}_${alnum(40)}`, phrase: (c) => `github_pat_${c}`, value: null },
  { name: 'URL user-info', core: () => `pw${alnum(18)}`, phrase: (c) => `https://deploy:${c}@example.test/repo.git`, value: null },
  { name: 'credential query value', core: () => alnum(24), phrase: (c, enc) => `https://example.test/api?${QUERY_NAME[enc]}=${c}`, value: null },
  { name: 'env-store value', core: () => `env-${alnum(16)}`, phrase: (c) => c, value: 'env' },
  { name: 'session variable value', core: () => `sess-${alnum(16)}`, phrase: (c) => c, value: 'session' },
];

/** Every byte as `%XX` (upper-case hex), as a hostile client would send a secret to hide it. */
export const pct = (s: string): string => [...Buffer.from(s)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** One planted secret: a kind in an encoding, with its own core and the topic it is planted from. */
export interface SecretCase {
  /** `<kind> / <encoding>`: what a leak report names. */
  id: string;
  kind: Kind;
  enc: Encoding;
  core: string;
  /** The phrase holding the core (`Authorization: Bearer <core>`, a URL, the value itself). */
  phrase: string;
  /** A short name for topics and paths: `k<kind>e<encoding>`. */
  tag: string;
}

/** Every kind in every encoding, with fresh secrets. */
export function secretCases(): SecretCase[] {
  return KINDS.flatMap((kind, k) => ENCODINGS.map((enc, e) => {
    const core = kind.core();
    return { id: `${kind.name} / ${enc}`, kind, enc, core, phrase: kind.phrase(core, enc), tag: `k${k}e${e}` };
  }));
}

/**
 * The case's secret as free text (a title, a request id) and inside a URL under `base` (a document
 * or install address): plain, fully percent-encoded after `%20`, as a path segment, as a query value
 * (a credential query kind in its own parameter).
 */
export function planted(c: SecretCase, base: string): { text: string; url: string } {
  const at = `${base}/${c.tag}`;
  switch (c.enc) {
    case 'plain':
      return { text: `see ${c.phrase} now`, url: `${at}/doc.md?q=${c.phrase}` };
    case 'percent':
      return { text: `see%20${pct(c.phrase)}`, url: `${at}/doc.md?q=%20${pct(c.phrase)}` };
    case 'url-path': {
      const url = `${at}/${encodeURIComponent(c.phrase)}/doc.md`;
      return { text: url, url };
    }
    case 'url-query': {
      const url = c.kind.name === 'credential query value' ? `${at}/doc.md?x=1&${c.phrase.slice(c.phrase.indexOf('?') + 1)}` : `${at}/doc.md?q=${encodeURIComponent(c.phrase)}`;
      return { text: url, url };
    }
  }
}

/** The forms in which a case's core would show if a reader leaked it: whole or its end, plain or percent-encoded. */
function forms(core: string): string[] {
  const end = core.slice(-12);
  return [core, end, pct(core), pct(end), pct(core).toLowerCase(), pct(end).toLowerCase()];
}

/** The ids of the cases whose secret shows in `text`. */
export function leaks(text: string, cases: readonly SecretCase[]): string[] {
  return cases.filter((c) => forms(c.core).some((f) => text.includes(f))).map((c) => c.id);
}

/** A loopback server for planted documents and installs (secretCases' tags pick the title). */
export interface PlantServer {
  origin: string;
  /** Titles by tag, read when a document is asked for. */
  titles: Map<string, string>;
  /** Answers held so far (installs under `/i/`). */
  held(): number;
  /** Finish every held answer. */
  release(): void;
  close(): Promise<void>;
}

/**
 * `/d/<tag>/…` answers a document whose front matter title is `titles.get(tag)`; `/i/<tag>/…` sends
 * the same document's first bytes and holds the rest until `release()`, so an install stays running
 * while its readers are looked at.
 */
export async function startPlantServer(): Promise<PlantServer> {
  const titles = new Map<string, string>();
  const held: Array<{ res: ServerResponse; rest: string }> = [];
  const server = createServer((req, res) => {
    const [, area, tag] = (req.url ?? '').split('?')[0].split('/');
    const body = `---\ntitle: ${JSON.stringify(titles.get(tag) ?? 'none')}\n---\n# Page\n\nText.\n`;
    res.writeHead(200, { 'Content-Type': 'text/markdown; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    if (area !== 'i') return void res.end(body);
    res.write(body.slice(0, 10));
    held.push({ res, rest: body.slice(10) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const release = () => { for (const h of held.splice(0)) h.res.end(h.rest); };
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    titles,
    held: () => held.length,
    release,
    close: () => new Promise<void>((resolve) => {
      for (const h of held.splice(0)) h.res.destroy();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** Read a streamed response (SSE) into `into.text` until it ends or its request is aborted. */
export async function collect(res: Response, into: { text: string }): Promise<void> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      into.text += dec.decode(value);
    }
  } catch {
    // Aborted: what came so far is kept.
  }
}

/** Poll `ok` every 20 ms; fails naming `what` after 30 s. */
export async function until(ok: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}
