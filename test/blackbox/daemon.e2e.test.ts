import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { writeFileSync, mkdirSync, statSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { CLI, freePort, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { raw } from '../helpers/app.js';
import { VERSION } from '../../src/version.js';

const running: RunningDaemon[] = [];
afterAll(async () => { for (const d of running) await d.kill(); });

/** Run the daemon expecting it to exit by itself; returns code and stderr. */
function runToExit(env: Record<string, string>, args: string[] = ['daemon']): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    p.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    const timer = setTimeout(() => p.kill('SIGKILL'), 15000);
    p.on('exit', (code) => { clearTimeout(timer); resolve({ code, stderr, stdout }); });
  });
}

describe('loom daemon process (behaviour.md §1.1)', () => {
  it('prints exactly one ready line and binds 127.0.0.1 only', async () => {
    const d = await startDaemon();
    running.push(d);
    expect(d.stdout()).toBe(`loom listening on http://127.0.0.1:${d.port}\n`);
    const r = await fetch(`${d.base}/health`);
    expect(r.status).toBe(200);
    await expect(fetch(`http://[::1]:${d.port}/health`)).rejects.toThrow();
    expect(await d.stop()).toBe(0);
  });

  it.each(['0', '65536', 'abc', '-1', '3.5'])('when SVC_PORT is %s, then exit 2 with the exact message', async (port) => {
    const r = await runToExit({ SVC_PORT: port, SVC_DATA_DIR: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`loom: invalid SVC_PORT "${port}"\n`);
  });

  it('when the port is in use, then exit 1 with loom: port <port> is in use', async () => {
    const port = await freePort();
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', () => r()));
    const r = await runToExit({ SVC_PORT: String(port), SVC_DATA_DIR: tempDir() });
    blocker.close();
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`loom: port ${port} is in use\n`);
  });

  it('when the registry cannot be parsed, then exit 1 and the file is left untouched (never reset silently)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'agents.json'), '{"version":1,"agents":{ broken');
    const r = await runToExit({ SVC_PORT: String(await freePort()), SVC_DATA_DIR: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^loom: cannot read ${join(dir, 'agents.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
    expect(readFileSync(join(dir, 'agents.json'), 'utf8')).toBe('{"version":1,"agents":{ broken');
  });

  it('when SIGINT arrives, then the daemon ends child processes and exits 0', async () => {
    const d = await startDaemon();
    running.push(d);
    await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo' }) });
    const marker = join(d.dataDir, 'child-alive');
    void fetch(`${d.base}/exec`, { method: 'POST', headers: { 'X-Agent-Id': 'leo' }, body: JSON.stringify({ cmd: `/exec sleep 1; while true; do date > ${marker}; sleep 0.2; done`, topic: 'main' }) }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1500));
    d.proc.kill('SIGINT');
    expect(await d.stop()).toBe(0);
    const t1 = statSync(marker).mtimeMs;
    await new Promise((r) => setTimeout(r, 600));
    expect(statSync(marker).mtimeMs).toBe(t1);
  });
});

describe('black-box session', () => {
  it('registers an agent, runs commands with exact SSE bytes, survives a restart, and stops on POST /shutdown', async () => {
    const dataDir = tempDir();
    let d = await startDaemon({ dataDir });
    running.push(d);
    const reg = await (await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo' }) })).json();
    expect(reg).toEqual({ agent_id: 'leo', home: join(dataDir, 'agents', 'leo', 'home'), created: true });
    const r = await raw(d.port, { method: 'POST', path: '/exec', headers: { 'X-Agent-Id': 'leo', 'Content-Type': 'application/json' }, body: JSON.stringify({ cmd: '/set {city} = "Seoul"\n$API = "secret-value"', topic: 'app:weather', request_id: 'a1' }) });
    const head = { ok: true, code: null, cmd: '/set {city} = "Seoul"', request_id: 'a1', agent_id: 'leo', topic: 'app:weather', topic_type: 'app', meta: null };
    expect(r.body).toBe(`event: head\ndata: ${JSON.stringify(head)}\n\nevent: content\ndata: ${JSON.stringify('re: [a1] /set {city} = "Seoul"\n{city} = "Seoul"\n$API set (app weather)')}\n\nevent: done\ndata: {}\n\n`);
    const listing = await raw(d.port, { method: 'POST', path: '/exec', headers: { 'X-Agent-Id': 'leo' }, body: JSON.stringify({ cmd: '/set', topic: 'app:weather' }) });
    expect(listing.body).toContain('$API = \\"se…\\" (12 chars, app weather)');
    expect(listing.body).not.toContain('secret-value');
    const created = ((await (await fetch(`${d.base}/agents`)).json()) as { agents: Array<{ createdAt: string }> }).agents[0].createdAt;
    expect(await d.stop()).toBe(0);

    d = await startDaemon({ dataDir });
    running.push(d);
    const agents = ((await (await fetch(`${d.base}/agents`)).json()) as { agents: unknown[] }).agents;
    expect(agents).toEqual([{ id: 'leo', home: join(dataDir, 'agents', 'leo', 'home'), allowedPaths: [], createdAt: created, sandbox: 'none', sandbox_source: 'default', network: 'public' }]);
    const after = await raw(d.port, { method: 'POST', path: '/exec', headers: { 'X-Agent-Id': 'leo' }, body: JSON.stringify({ cmd: '/set', topic: 'app:weather' }) });
    // Persistent variables survive; session variables do not.
    expect(after.body).toContain('$API = ');
    expect(after.body).not.toContain('{city}');
    const described = (await (await fetch(`${d.base}/describe`)).json()) as { version: string };
    expect(described.version).toBe(VERSION);
    const bye = await (await fetch(`${d.base}/shutdown`, { method: 'POST' })).json();
    expect(bye).toEqual({ ok: true, message: 'loom shutting down' });
    expect(await d.stop()).toBe(0);
  });

  it('the package.json version matches the daemon version', () => {
    expect(JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')).version).toBe(VERSION);
  });

  it('SVC_DATA_DIR is created with mode 0700', async () => {
    const parent = tempDir();
    const dataDir = join(parent, 'nested', 'data');
    mkdirSync(join(parent, 'nested'));
    const d = await startDaemon({ dataDir });
    running.push(d);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    await d.stop();
  });
});
