import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { CLI, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { loom } from './support.js';

/*
 * First-minutes findings of the CLI (issue: install like any Node tool, points 8–15): paths of the
 * shell's folder, GET /, inspect --open without a browser, the daemon's own pid file, queue refusals.
 */

let d: RunningDaemon;
let home: string;
/** A project folder of the user's, in leo's workspace (as `loom agent add leo --allow "$PWD/examples"`). */
let project: string;
const dirs: string[] = [];
const leo = { LOOM_AGENT_ID: 'leo' };

beforeAll(async () => {
  d = await startDaemon();
  project = tempDir('loom-project-');
  dirs.push(d.dataDir, project);
  home = String((await new LoomClient(d.base).registerAgent({ agent_id: 'leo', allowed_paths: [project] })).body.home);
});
afterAll(async () => {
  await d?.kill();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Run the CLI in the folder `cwd` against the daemon. */
function loomIn(cwd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, ...leo, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const app = (name: string, version: string) => `---\nname: ${name}\nversion: ${version}\n---\n# ${name}\n`;

describe('loom install: paths of the shell\'s current folder', () => {
  it('when the source names a file of the current folder, then that file is installed (sent as an absolute path)', async () => {
    mkdirSync(join(project, 'examples/quickstart'), { recursive: true });
    writeFileSync(join(project, 'examples/quickstart/notes.md'), app('cwdnotes', '0.1.0'));
    const r = await loomIn(project, ['install', 'examples/quickstart/notes.md']);
    expect(r).toEqual({ code: 0, stdout: `Installed app:cwdnotes (local, 1 file) from ${project}/examples/quickstart/notes.md\nnext: /open app:cwdnotes\n`, stderr: '' });
  });

  it('when the source starts with ./ or ../, then it is the folder\'s path even when nothing is there', async () => {
    mkdirSync(join(project, 'apps/dot'), { recursive: true });
    writeFileSync(join(project, 'apps/dot/string.md'), app('dotapp', '1.0.0'));
    const ok = await loomIn(join(project, 'examples'), ['install', '../apps/dot']);
    expect(ok.stdout).toBe(`Installed app:dotapp (local, 1 file) from ${project}/apps/dot\nnext: /open app:dotapp\n`);
    const missing = await loomIn(project, ['install', './missing.md']);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: `ERROR(NOT_FOUND): Not found: ${project}/missing.md\n` });
  });

  it('when a relative source does not exist in the current folder, then it is the agent\'s, as before (~ too)', async () => {
    mkdirSync(join(home, 'apps/homeapp'), { recursive: true });
    writeFileSync(join(home, 'apps/homeapp/string.md'), app('homeapp', '1.0.0'));
    expect((await loomIn(project, ['install', 'apps/homeapp'])).stdout).toBe('Installed app:homeapp (local, 1 file) from ~/apps/homeapp\nnext: /open app:homeapp\n');
    expect((await loomIn(project, ['install', '~/apps/homeapp', '--as', 'homeapp2'])).stdout).toBe('Installed app:homeapp2 (local, 1 file) from ~/apps/homeapp\nnext: /open app:homeapp2\n');
  });

  it('when loom trace get -o and loom replay name relative files, then they are files of the current folder', async () => {
    const started = await loomIn(project, ['trace', 'start', '--agent', 'leo', '-q']);
    const id = started.stdout.trim();
    expect(id).toMatch(/^trc_/);
    expect((await loomIn(project, ['main', '/help', 'open'])).code).toBe(0);
    expect((await loomIn(project, ['trace', 'stop', id])).code).toBe(0);
    const got = await loomIn(project, ['trace', 'get', id, '-o', 'run.jsonl']);
    expect(got.code).toBe(0);
    expect(got.stderr).toMatch(/^wrote run\.jsonl \(\d+ steps?\)\n$/);
    expect(existsSync(join(project, 'run.jsonl'))).toBe(true);
    const again = await loomIn(project, ['replay', 'run.jsonl', '--against', d.base]);
    expect(again.code).toBe(0);
    const absent = await loomIn(project, ['replay', './absent.jsonl', '--against', d.base]);
    expect(absent.code).toBe(2);
    expect(absent.stderr).toContain('loom replay: cannot read ./absent.jsonl: ENOENT');
  });
});

describe('GET / (behaviour.md §13.7)', () => {
  it('when a browser asks, then 302 to /inspect', async () => {
    const r = await fetch(`${d.base}/`, { redirect: 'manual', headers: { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect([r.status, r.headers.get('location')]).toEqual([302, '/inspect']);
  });

  it('when anything else asks, then 200 and a small JSON index', async () => {
    for (const accept of ['*/*', 'application/json', '']) {
      const r = await fetch(`${d.base}/`, { headers: accept ? { Accept: accept } : {} });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await r.text()).toBe('{"name":"loom","inspect":"/inspect","describe":"/describe","health":"/health"}');
    }
  });

  it('when another method asks, then 405 with Allow', async () => {
    const r = await fetch(`${d.base}/`, { method: 'POST' });
    expect([r.status, r.headers.get('allow'), await r.json()]).toEqual([405, 'GET, HEAD', { error: 'Method not allowed: POST /' }]);
  });
});

describe('loom inspect --open', () => {
  it('when no browser is found, then the URL on stdout, "no browser found" on stderr, exit 1', async () => {
    const url = `${d.base}/inspect`;
    for (const browser of [join(project, 'no-such-browser'), 'false']) {
      const r = await loom(d, ['inspect', '--open'], { BROWSER: browser });
      expect(r).toEqual({ code: 1, stdout: `${url}\n`, stderr: 'loom: no browser found; set $BROWSER, or open the URL above by hand\n' });
    }
    const j = await loom(d, ['--json', 'inspect', '--open'], { BROWSER: 'false' });
    expect(j.code).toBe(0);
    expect(Object.keys(JSON.parse(j.stdout))).toEqual(['at', 'version', 'uptime_ms', 'agents']);
  });

  it('when the browser opens the page, then exit 0', async () => {
    expect(await loom(d, ['inspect', '--open'], { BROWSER: 'true' })).toEqual({ code: 0, stdout: `${d.base}/inspect\n`, stderr: '' });
  });
});

describe('the daemon\'s own pid file', () => {
  it('when the daemon runs in the foreground (loom daemon, npm start), then <data>/loom.pid holds its pid and loom status shows it', async () => {
    expect(readFileSync(join(d.dataDir, 'loom.pid'), 'utf8')).toBe(`${d.proc.pid}\n`);
    const r = await loom(d, ['status']);
    expect(r.stdout).toMatch(new RegExp(`^loom \\S+ is running on http://127\\.0\\.0\\.1:${d.port} \\(pid ${d.proc.pid}\\) · agents: \\d+ · sessions: \\d+\\n$`));
    expect(JSON.parse((await loom(d, ['--json', 'status'])).stdout)).toMatchObject({ running: true, pid: d.proc.pid, port: d.port });
  });

  it('when the daemon exits, then it removes its pid file', async () => {
    const other = await startDaemon();
    dirs.push(other.dataDir);
    const file = join(other.dataDir, 'loom.pid');
    expect(readFileSync(file, 'utf8')).toBe(`${other.proc.pid}\n`);
    expect(await other.stop()).toBe(0);
    expect(existsSync(file)).toBe(false);
  });
});

describe('queue refusals in the CLI', () => {
  it('when the topic\'s queue is full, then ERROR(QUEUE_FULL): … on stderr and exit 1, like every failed command', async () => {
    const c = new LoomClient(d.base, 'leo');
    const running = c.exec('q', '/exec sleep 4');
    const waiting: Array<Promise<unknown>> = [];
    const queued = async () => ((await (await fetch(`${d.base}/sessions?agent_id=leo`)).json()) as { sessions: Array<{ topic: string; queue_length: number }> }).sessions.find((s) => s.topic === 'q')?.queue_length ?? 0;
    while (waiting.length < 5) {
      waiting.push(c.exec('q', '/info'));
      await new Promise((r) => setTimeout(r, 20));
    }
    while ((await queued()) < 5) await new Promise((r) => setTimeout(r, 20));
    const r = await loom(d, ['q', '/info'], leo);
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'ERROR(QUEUE_FULL): Topic q already has 5 commands waiting.\n' });
    const j = await loom(d, ['--json', 'q', '/info'], leo);
    expect([j.code, JSON.parse(j.stderr)]).toEqual([1, { error: 'Topic q already has 5 commands waiting.', code: 'QUEUE_FULL', message: 'ERROR(QUEUE_FULL): Topic q already has 5 commands waiting.' }]);
    await Promise.all([running, ...waiting]);
  });
});
