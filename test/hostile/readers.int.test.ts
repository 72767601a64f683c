import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { openInspector } from '../inspector/support.js';
import { collect, leaks, planted, secretCases, startPlantServer, until, type PlantServer, type SecretCase } from './secretCases.js';

/**
 * behaviour.md §13.4: every reader of text an agent controls goes through one masking point. The
 * readers are enumerated from the daemon itself — every route it registers, every upgrade, every
 * file it appends to — and each must be named in the audit of docs/hardening.md: as a reader with its
 * masking point, or as an output that is not such a reader, with the reason. A new route or log file
 * fails here until it is classified; a reader whose masking point is bypassed fails the probe below,
 * which plants secrets and reads every reader route of the audit.
 */

const AUDIT_TITLE = '## The audit: every reader of agent-controlled text and its masking point';
/** The functions of the rule: a masking point calls one of them. */
const RULE = /\b(?:shown|redactText|redactCommand|maskShapes|scrub)\(/;

/** The audit's two tables: rows of cells, each cell's backticked names. */
function audit(): { readers: string[][]; others: string[][] } {
  const doc = readFileSync('docs/hardening.md', 'utf8');
  const start = doc.indexOf(AUDIT_TITLE);
  expect(start).toBeGreaterThan(0);
  const section = doc.slice(start, doc.indexOf('\n## ', start + AUDIT_TITLE.length));
  // Consecutive `|` lines make a table; its first two are the header and the rule.
  const tables: string[][] = [];
  let open = false;
  for (const line of section.split('\n')) {
    if (!line.startsWith('|')) open = false;
    else if (open) tables[tables.length - 1].push(line);
    else {
      tables.push([]);
      open = true;
    }
  }
  for (const table of tables) table.shift();
  expect(tables).toHaveLength(2);
  const rows = (lines: string[]) => lines.map((l) => l.split(/(?<!\\)\|/).slice(1, -1));
  return { readers: rows(tables[0]).map((r) => r.map((c) => c.trim())), others: rows(tables[1]).map((r) => r.map((c) => c.trim())) };
}

/** `METHOD /path` names in backticks of some cells. */
const routesIn = (cells: string[]) => cells.flatMap((c) => [...c.matchAll(/`((?:GET|POST|PUT|DELETE|HEAD) \/[^`]*)`/g)].map((m) => m[1]));

/** The methods a path takes, from its 405 answer to a method no route has (behaviour.md §9.1 `Allow`). */
function allowed(port: number, path: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'PROPFIND', path }, (res) => {
      res.resume();
      resolve(res.statusCode === 405 ? String(res.headers.allow).split(', ') : []);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every `METHOD /path` the app answers: Express routes by their 405 `Allow`, and the upgrades. */
async function registeredRoutes(t: TestApp): Promise<string[]> {
  const stack = (t.c.express() as unknown as { router: { stack: Array<{ route?: { path: unknown } }> } }).router.stack;
  const paths = stack.flatMap((l) => (l.route ? [l.route.path instanceof RegExp ? '/fs/*' : String(l.route.path).replace(/\{\*\w+\}/g, '*')] : []));
  expect(paths.length).toBeGreaterThan(20);
  const out: string[] = [];
  for (const p of paths) {
    const methods = await allowed(t.port, p.replace(/:\w+/g, 'x').replace(/\*/g, 'x'));
    expect([p, methods.length > 0]).toEqual([p, true]);
    out.push(...methods.map((m) => `${m} ${p}`));
  }
  return [...out, ...[...t.c.ctx.upgrades.keys()].map((p) => `GET ${p}`)];
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/** Daemon files that open a file for appending (a log others may read): `open(…, 'a')`, `'a+'`, appendFile, write streams. */
const appenders = () => walk('src').filter((f) => f.endsWith('.ts') && !f.startsWith('src/cli/'))
  .filter((f) => /\bopen(?:Sync)?\([^;]*['"]a\+?['"]|appendFile(?:Sync)?\(|createWriteStream\(/.test(readFileSync(f, 'utf8')));

describe('the audit of readers (docs/hardening.md) covers the daemon', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startApp(); });
  afterAll(async () => {
    await t?.close();
    if (t) rmSync(t.dataDir, { recursive: true, force: true });
  });

  it('names every route and upgrade the daemon registers, as a reader with its masking point or as another output', async () => {
    const { readers, others } = audit();
    const named = new Set([...readers.flatMap((r) => routesIn([r[0]])), ...others.flatMap((r) => routesIn([r[0]]))]);
    const routes = await registeredRoutes(t);
    expect(routes).toContain('GET /inspect/state');
    expect(routes.filter((r) => !named.has(r))).toEqual([]);
    // And names no route that is gone.
    expect([...named].filter((r) => !routes.includes(r))).toEqual([]);
  });

  it('names every file the daemon appends to', () => {
    const { readers, others } = audit();
    const text = [...readers, ...others].flat().join('\n');
    const files = appenders();
    expect(files).toEqual(expect.arrayContaining(['src/effects/requestLogFile.ts', 'src/services/traceWriter.ts']));
    expect(files.filter((f) => !text.includes(`\`${f}\``))).toEqual([]);
  });

  it('every masking point exists and applies the rule', () => {
    const points = audit().readers.flatMap((r) => [...r[2].matchAll(/`(src\/[\w/]+\.ts)`((?:\s+`[A-Za-z_]\w*`(?:\s*\([^)]*\))?)*)/g)]
      .map((m) => ({ file: m[1], names: [...m[2].matchAll(/`(\w+)`/g)].map((n) => n[1]) })));
    expect(points.length).toBeGreaterThanOrEqual(6);
    for (const { file, names } of points) {
      expect([file, existsSync(file)]).toEqual([file, true]);
      const code = readFileSync(file, 'utf8');
      expect([file, RULE.test(code)]).toEqual([file, true]);
      for (const n of names) expect([file, n, new RegExp(`\\b${n}\\b`).test(code)]).toEqual([file, n, true]);
    }
  });
});

/**
 * The probe: secrets planted in a document's title and address, an install's source, a request id
 * and a path, then every reader route of the audit read (GET; an SSE route for a while; an upgrade
 * as a WebSocket's first message), and the request log and trace files.
 */
describe('every reader route of the audit shows no planted secret', () => {
  let t: TestApp;
  let plants: PlantServer;
  const cases: SecretCase[] = secretCases().filter((c) => c.enc === 'percent' || c.enc === 'url-query' || c.kind.value !== null);
  const got: Record<string, string> = {};

  beforeAll(async () => {
    t = await startApp({ memory: false });
    plants = await startPlantServer();
    for (const c of cases) plants.titles.set(c.tag, planted(c, `${plants.origin}/d`).text);
    const eve = t.client('eve');
    expect((await eve.registerAgent({ agent_id: 'eve' })).status).toBe(200);
    const trace = (await (await fetch(`${t.base}/traces`, { method: 'POST', body: JSON.stringify({ agent_id: 'eve' }) })).json() as { trace_id: string }).trace_id;
    const installs: Array<Promise<unknown>> = [];
    for (const c of cases) {
      if (c.kind.value === 'env') await eve.exec('setup', `/set $P_${c.tag} = "${c.core}"`);
      if (c.kind.value === 'session') await eve.exec(`d${c.tag}`, `/set {leak} = "${c.core}"`);
      await eve.exec(`d${c.tag}`, `/open ${planted(c, `${plants.origin}/d`).url}`, planted(c, t.base).text);
      installs.push(eve.exec(`d${c.tag}`, `/install "${planted(c, `${plants.origin}/i`).url}" --as p${c.tag}`));
      await fetch(`${t.base}/nothing/${encodeURIComponent(planted(c, '').text)}`, { headers: { 'X-Agent-Id': 'eve' } });
    }
    await until(() => plants.held() === cases.length, 'every install to be running');
    const readerRoutes = audit().readers.flatMap((r) => routesIn([r[0]]));
    expect(readerRoutes.length).toBeGreaterThanOrEqual(6);
    for (const r of readerRoutes) got[r] = await read(r, trace);
    plants.release();
    await Promise.all(installs);
    got['GET /packages (after the installs)'] = await read('GET /packages', trace);
    await fetch(`${t.base}/traces/${trace}`, { method: 'DELETE' });
    got['trace file'] = readFileSync(join(t.dataDir, 'traces', `${trace}.jsonl`), 'utf8');
    await t.close();
    const log = join(t.dataDir, 'logs', 'requests.log');
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes('"path":"/traces/'), 'the request log to be written');
    got['request log'] = readFileSync(log, 'utf8');
  }, 120000);

  afterAll(async () => {
    await plants?.close();
    if (t) rmSync(t.dataDir, { recursive: true, force: true });
  });

  /** What a reader route answers the agent `eve` (`:id` is the trace); an SSE route is read for half a second. */
  async function read(route: string, traceId: string): Promise<string> {
    const [method, path] = route.split(' ');
    if (path === '/inspect/ws') {
      const ws = await openInspector(t.port);
      await ws.close();
      return ws.raw[0];
    }
    const stop = new AbortController();
    const res = await fetch(`${t.base}${path.replace(':id', traceId)}`, { method, headers: { 'X-Agent-Id': 'eve' }, signal: stop.signal });
    expect([route, res.status]).toEqual([route, 200]);
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return res.text();
    // The stream tells only what changes from now on: a changed install shows its source.
    const into = { text: '' };
    const reading = collect(res, into);
    await new Promise((r) => setTimeout(r, 500));
    stop.abort();
    await reading;
    return into.text;
  }

  it('reads every reader of the audit, and finds none of the secrets in any', () => {
    expect(Object.keys(got).length).toBeGreaterThanOrEqual(8);
    expect(got['GET /installs']).toContain('"source"');
    expect(got['GET /packages (after the installs)']).toContain('"source"');
    // A trace keeps session variables: a replay sets them again (behaviour.md §14.2).
    const isTrace = (reader: string) => reader === 'trace file' || reader === 'GET /traces/:id';
    const found = Object.entries(got).map(([reader, text]) => [reader, leaks(text, isTrace(reader) ? cases.filter((c) => c.kind.value !== 'session') : cases)]);
    expect(found.filter(([, l]) => l.length > 0)).toEqual([]);
  });
});
