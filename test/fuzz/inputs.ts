/**
 * Generated hostile inputs for /exec and /mcp: a seeded PRNG drives a small grammar of
 * command words, argument atoms, topics, agent ids and body shapes, so a seed always gives the same
 * inputs. Nothing generated leaves 127.0.0.1 or runs a shell command other than `echo`/`printf`
 * (every `/exec` argument is single-quoted).
 */

/** mulberry32: a tiny, well-mixed 32-bit PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One HTTP request to send. */
export interface FuzzInput {
  kind: 'exec' | 'mcp';
  headers: Record<string, string>;
  body: string;
}

const PROTO = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
const WORDS = [
  'help', 'info', 'open', 'back', 'refresh', 'close', 'nav', 'source', 'ls', 'edit', 'write', 'append', 'replace', 'undo',
  'act', 'action', 'set', 'unset', 'exec', 'install', 'uninstall', 'packages', 'events', 'webhook', 'topics',
  'events.read', 'events.ack', 'events.clear', 'act.x', 'act.help', 'webhook.rotate', ...PROTO, 'HELP', 'Ünïcode', '', 'x'.repeat(70),
];

/**
 * Secrets of every shape the daemon must keep out of the inspector and the request log
 * (behaviour.md §13.4); a fuzz session checks both for each of them afterwards.
 */
export function secretAtoms(port: number): string[] {
  return [
    `caps_${'F7z'.repeat(14)}q`, `wh_${'Wq9'.repeat(14)}z`, `http://127.0.0.1:${port}/webhook/wh_${'Hk2'.repeat(14)}p`,
    'Authorization: Bearer fuzz-Bearer-Secret-0123456789', `ghp_${'Fz0'.repeat(12)}`, `github_pat_${'Pz_1'.repeat(20)}`,
  ];
}

/** Argument atoms: quoting, expansions, paths, shortcuts, flags, ids, oversized and odd characters. */
function atoms(port: number): string[] {
  return [
    "'", '"', '\\', '$', '{', '}', '{x}', '{{x}}', '$HOME', '${HOME}', '$(echo hi)', '`echo hi`', '@x', '@@x', '@x-1', '--flag', '--x=',
    '-n', '--', '--help', '~', '~/a', '../..', '../../../etc', '/etc/passwd', '/dev/null', '/proc/self', '\u0000', '\r', '😀', 'é',
    'a'.repeat(300), 'b/'.repeat(2100), '12', '-5', '0x10', '#anchor', 'evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2', 'evt_bad', 'file:///etc/hosts',
    `http://127.0.0.1:${port}/nothing.md`, 'http://127.0.0.1:9/closed.md', 'app:x', 'app:', '*', 'a[$(true)]', '$x = "1"', '{v} = 2',
    '"unterminated', "'unterminated", 'x.md', 'dir/x.md', '.', '..', '--lines 1-2', '--old "a"', '--all', '--force', ...PROTO,
    '$__proto__ = "1"', '$constructor = "2"', '{__proto__} = "3"', ...secretAtoms(port),
    // Special files planted in every home (session.ts) and devices under /dev, an allowed path.
    '~/fifo.md', 'fifo.md', '~/pkg', '~/huge.md', '/dev/zero', '/dev/tty', '/dev/urandom', '/dev/stdin', '--text-file ~/fifo.md',
  ];
}

const TOPICS = [
  'main', 'fz1', 'fz2', 'fz3', 'app:x', 'app:x:y', 'bash:b', 'event', 'app', 'system', 'agent', 'tool', 'bash',
  ...PROTO.filter((p) => !p.startsWith('_')).map((p) => `app:${p}`), 'a b', 'x/y', '', 'app:', 'app:a:b:c', 'file:x', 'y'.repeat(65), ' main ',
];

/** Pick one element. */
export const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

/** A shell word single-quoted for bash: `/exec` only ever runs echo or printf. */
const shellQuote = (s: string) => `'${s.replace(/\0/g, '').replace(/'/g, `'\\''`)}'`;

/** A slash command: a word, up to six atoms, sometimes a body. */
export function command(r: () => number, port: number): string {
  const a = atoms(port);
  if (r() < 0.12) {
    const words = Array.from({ length: Math.floor(r() * 4) }, () => shellQuote(pick(r, a)));
    return `/exec ${pick(r, ['', '--timeout 5 ', '--timeout 0 ', '--timeout x '])}${pick(r, ['echo', 'printf %s'])} ${words.join(' ')}`;
  }
  const word = pick(r, WORDS);
  const args = Array.from({ length: Math.floor(r() * 7) }, () => pick(r, a)).join(pick(r, [' ', ' ', '  ', '\t']));
  const body = r() < 0.25 ? `\n${Array.from({ length: 1 + Math.floor(r() * 3) }, () => pick(r, a)).join('\n')}` : '';
  return `${r() < 0.97 ? '/' : ''}${word}${args ? ' ' : ''}${args}${body}`;
}

/** An /exec request: usually well-formed, sometimes a broken body or header. */
export function execInput(r: () => number, port: number, agents: readonly string[]): FuzzInput {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'text/event-stream' };
  const who = r();
  if (who < 0.9) headers['X-Agent-Id'] = pick(r, agents);
  else if (who < 0.95) headers['X-Agent-Id'] = pick(r, ['unknown-agent', '__proto__', ' ', 'a b', 'constructor', 'x'.repeat(70)]);
  const shape = r();
  let body: string;
  if (shape < 0.85) {
    const o: Record<string, unknown> = { cmd: command(r, port), topic: pick(r, TOPICS) };
    if (r() < 0.2) o.request_id = pick(r, ['r1', '', 'x'.repeat(300), 7, null, ['a'], ...secretAtoms(port)]);
    body = JSON.stringify(o);
  } else {
    body = pick(r, [
      '', '{', 'null', '[]', '"cmd"', '42', '{"cmd":42,"topic":"main"}', '{"cmd":"/help"}', '{"cmd":"/help","topic":7}',
      '{"__proto__":{"cmd":"/help","topic":"main"}}', '{"cmd":"help","topic":"main"}', '{"cmd":"   ","topic":"main"}',
      JSON.stringify({ cmd: `/write big.txt\n${'z'.repeat(200_000)}`, topic: 'main' }), '{"cmd":"/help","topic":"main","request_id":{}}',
    ]);
  }
  return { kind: 'exec', headers, body };
}

/** An MCP request: JSON-RPC calls, notifications, batches and broken envelopes. */
export function mcpInput(r: () => number, port: number, agents: readonly string[]): FuzzInput {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: r() < 0.92 ? 'application/json, text/event-stream' : pick(r, ['application/json', '*/*', 'text/event-stream']) };
  if (r() < 0.85) headers['X-Agent-Id'] = pick(r, agents);
  else if (r() < 0.5) headers['X-Agent-Id'] = pick(r, ['__proto__', 'a b', 'toString', 'fresh-agent']);
  if (r() < 0.05) headers['MCP-Protocol-Version'] = pick(r, ['1999-01-01', '2025-06-18', 'x']);
  const call = () => {
    const args = r() < 0.85 ? { topic: pick(r, TOPICS), cmd: command(r, port) } : pick(r, [{}, { topic: 1, cmd: [] }, { cmd: '/help' }, null, 'x', { topic: 'main', cmd: '/help', extra: { __proto__: 1 } }]);
    const method = r() < 0.7 ? 'tools/call' : pick(r, ['tools/list', 'initialize', 'ping', 'resources/list', 'prompts/list', 'nope', '']);
    const params = method === 'initialize'
      ? { protocolVersion: pick(r, ['2025-06-18', '2024-11-05', 'bad']), capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } }
      : { name: pick(r, ['loom', 'loom', 'other', '']), arguments: args };
    const msg: Record<string, unknown> = { jsonrpc: r() < 0.95 ? '2.0' : '1.0', method, params };
    // Mostly valid ids; sometimes odd ones; sometimes none (a notification).
    const idShape = r();
    if (idShape < 0.84) msg.id = Math.floor(r() * 1000);
    else if (idShape < 0.92) msg.id = pick(r, ['a', 0, null, 1.5]);
    return msg;
  };
  const shape = r();
  const body = shape < 0.8 ? JSON.stringify(call()) : shape < 0.88 ? JSON.stringify([call(), call()]) : pick(r, ['', '{', 'null', '[]', '{"jsonrpc":"2.0"}', '{"__proto__":{"method":"tools/list"}}']);
  return { kind: 'mcp', headers, body };
}

/** `count` inputs for `seed`, about half /exec and half /mcp. */
export function inputs(seed: number, count: number, port: number, agents: readonly string[]): FuzzInput[] {
  const r = prng(seed);
  return Array.from({ length: count }, () => (r() < 0.5 ? execInput(r, port, agents) : mcpInput(r, port, agents)));
}
