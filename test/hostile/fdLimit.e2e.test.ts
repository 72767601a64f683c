import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultLogHandles } from '../../src/stores/logHandles.js';
import { CLI, freePort, tempDir } from '../helpers/daemon.js';
import { exec, json } from './support.js';

/**
 * Under a low `ulimit -n`, many agents with inbox logs must not exhaust the descriptors: webhooks,
 * `/agents`, `/ls` and `/exec` keep working, and a POST /agents that fails is not applied in memory.
 * Log descriptors are a bounded pool (docs/decisions/0011) and every registry change is written
 * before it is applied (docs/decisions/0004).
 */

const LIMIT = 96;
const AGENTS = 140;
const procs: ChildProcess[] = [];
afterAll(async () => {
  for (const p of procs) {
    if (p.exitCode !== null || p.signalCode !== null) continue;
    p.kill('SIGKILL');
    await new Promise((r) => p.once('exit', r));
  }
});

/** The built daemon under `ulimit -n <limit>` (bash sets the limit, then execs node). */
async function startLimited(dataDir: string, limit: number): Promise<{ base: string; pid: number }> {
  const port = await freePort();
  const proc = spawn('/bin/bash', ['-c', `ulimit -n ${limit} && exec "$0" "$@"`, process.execPath, CLI, 'daemon'], {
    env: { ...process.env, SVC_PORT: String(port), SVC_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(proc);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error('daemon did not start')), 15000);
    proc.stdout.on('data', (c: Buffer) => { out += c.toString(); if (out.includes('listening')) { clearTimeout(t); resolve(); } });
    proc.once('exit', (code) => { clearTimeout(t); reject(new Error(`daemon exited ${code}`)); });
  });
  return { base: `http://127.0.0.1:${port}`, pid: proc.pid as number };
}

/** Descriptors of a process that point at inbox logs. */
function openLogs(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try { if (readlinkSync(`/proc/${pid}/fd/${fd}`).endsWith('events.jsonl')) n++; } catch { /* closed meanwhile */ }
  }
  return n;
}

describe(`${AGENTS} agents under ulimit -n ${LIMIT}`, () => {
  it('when every agent receives a webhook event, then nothing fails with EMFILE and the log descriptors stay bounded', async () => {
    const dataDir = tempDir();
    const { base, pid } = await startLimited(dataDir, LIMIT);
    const failures: string[] = [];
    const one = async (id: string) => {
      const reg = await json(base, 'POST', '/agents', { agent_id: id, webhook: true });
      if (reg.status !== 200) { failures.push(`${id}: POST /agents ${reg.status} ${JSON.stringify(reg.body)}`); return; }
      const hook = await fetch(String(reg.body.webhook_url), { method: 'POST', body: `event for ${id}` });
      if (hook.status !== 202) failures.push(`${id}: webhook ${hook.status} ${await hook.text()}`);
    };
    // Ten at a time: registrations queue on the registry, webhooks share syncs.
    for (let i = 0; i < AGENTS; i += 10) await Promise.all(Array.from({ length: Math.min(10, AGENTS - i) }, (_, k) => one(`a${i + k}`)));
    expect(failures).toEqual([]);
    expect(openLogs(pid)).toBeLessThanOrEqual(defaultLogHandles(LIMIT));
    const last = `a${AGENTS - 1}`;
    expect((await exec(base, last, 'main', '/ls')).head?.ok).toBe(true);
    expect((await exec(base, last, 'main', '/exec echo ok')).head?.ok).toBe(true);
    expect((await exec(base, 'a0', 'event', '/events')).body).toContain('event for a0');
    expect((await json(base, 'GET', '/health')).body.agents).toBe(AGENTS);
    expect(Object.keys((JSON.parse(readFileSync(join(dataDir, 'agents.json'), 'utf8')) as { agents: object }).agents)).toHaveLength(AGENTS);
  }, 180000);

  it('when the registry cannot be written, then POST /agents fails and changes nothing in memory', async () => {
    const dataDir = tempDir();
    const { base } = await startLimited(dataDir, LIMIT);
    expect((await json(base, 'POST', '/agents', { agent_id: 'kept' })).status).toBe(200);
    // A file where the data directory was: the atomic write (temp file, rename) cannot happen.
    renameSync(dataDir, `${dataDir}.moved`);
    writeFileSync(dataDir, 'not a folder');
    const r = await json(base, 'POST', '/agents', { agent_id: 'lost', home: tempDir() });
    expect(r.status).toBe(500);
    expect(((await json(base, 'GET', '/agents')).body.agents as Array<{ id: string }>).map((a) => a.id)).toEqual(['kept']);
    expect((await json(base, 'GET', '/health')).body.agents).toBe(1);
    rmSync(dataDir);
    renameSync(`${dataDir}.moved`, dataDir);
    expect((await json(base, 'POST', '/agents', { agent_id: 'lost' })).body.created).toBe(true);
  });
});
