import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoomClient } from '../../src/client/index.js';
import { runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

/**
 * behaviour.md §13.8 export: GET /inspect/export is the snapshot and the machine catalogue as one
 * bundle, masked as everything the inspector sends (§13.4); `loom inspect --export <file>` writes it
 * with mode 0600 and never through a link or a FIFO someone left at that path.
 */
let d: RunningDaemon;
const dir = tempDir('loom-export-');
const env = () => ({ SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir });

beforeAll(async () => { d = await startDaemon(); });
afterAll(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const GHP = `ghp_${'Q7w8E9r0T1'.repeat(3)}zZz999`;

describe('GET /inspect/export (behaviour.md §13.8)', () => {
  it('when a session created every kind of secret, then the bundle holds the session and none of the secrets', async () => {
    const reg = await (await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo', webhook: true }) })).json() as { webhook_url: string };
    const minted = await (await fetch(`${d.base}/capabilities`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo', verbs: ['GET'], ttl_ms: 60000 }) })).json() as { secret: string; token_id: string };
    const c = new LoomClient(d.base, 'leo');
    await c.exec('main', '/set $TOKEN = "env-secret-31337"');
    await c.exec('main', '/set {pin} = "session-secret-2718"');
    await c.exec('main', '/exec echo env-secret-31337 session-secret-2718', GHP);
    await c.exec('main', '/write ~/note.txt\nbody-secret-1618\nsecond line');
    // A command still running and one waiting when the bundle is taken: both hold the values.
    const running = c.exec('slow', '/exec sleep 3; echo env-secret-31337');
    await waitFor(async () => (await state()).topics.some((t) => t.topic === 'slow' && t.running !== null));
    const waiting = c.exec('slow', `/exec echo ${minted.secret}`, `req-${GHP}`);
    await waitFor(async () => (await state()).topics.some((t) => t.topic === 'slow' && t.waiting.length === 1));

    const res = await fetch(`${d.base}/inspect/export`);
    const text = await res.text();
    await Promise.all([running, waiting]);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="loom-inspector-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.json"$/);
    const bundle = JSON.parse(text) as Bundle;
    expect(Object.keys(bundle)).toEqual(['format', 'version', 'exported_at', 'loom_version', 'state', 'machines']);
    expect(bundle).toMatchObject({ format: 'loom-inspector-bundle', version: 1, loom_version: bundle.state.version, exported_at: bundle.state.at });
    expect(Object.keys(bundle.machines)).toEqual(expect.arrayContaining(['topicQueue', 'capability', 'webhookToken', 'agent', 'install', 'shell']));
    // The same machines GET /inspect/machines sends.
    expect(bundle.machines).toEqual(await (await fetch(`${d.base}/inspect/machines`)).json());

    const leo = bundle.state.agents.find((a) => a.agent_id === 'leo') as BundleAgent;
    const main = leo.topics.find((t) => t.topic === 'main') as BundleTopic;
    expect(main.recent.map((r) => r.cmd)).toEqual(['/set $TOKEN = "en…"', '/set {pin} = "se…"', '/exec echo ${env:TOKEN} {pin}', '/write ~/note.txt']);
    expect(main.recent[2].request_id).toBe('ghp_<secret>');
    const slow = leo.topics.find((t) => t.topic === 'slow') as BundleTopic;
    expect(slow.running?.cmd).toBe('/exec sleep 3; echo ${env:TOKEN}');
    expect(slow.waiting.map((w) => w.request_id)).toEqual(['req-ghp_<secret>']);
    expect(leo.capabilities.map((x) => x.token_id)).toContain(minted.token_id);
    const token = reg.webhook_url.slice(reg.webhook_url.lastIndexOf('/') + 1);
    for (const secret of ['env-secret-31337', 'session-secret-2718', 'body-secret-1618', 'second line', minted.secret, token, GHP, '/webhook/']) {
      expect([secret, text.includes(secret)]).toEqual([secret, false]);
    }
    // docs/inspector.md shows the bundle through its jq line: the same fields and machines.
    const shown = [...readFileSync(join(process.cwd(), 'docs', 'inspector.md'), 'utf8').matchAll(/```json\n([\s\S]*?)```/g)]
      .map((m) => JSON.parse(m[1]) as Record<string, unknown>).find((b) => b.format === 'loom-inspector-bundle');
    expect(shown).toEqual({
      format: bundle.format, version: bundle.version, exported_at: expect.any(String), loom_version: bundle.loom_version,
      agents: expect.any(Array), machines: Object.keys(bundle.machines).sort(),
    });
  }, 30000);
});

describe('loom inspect --export <file> (behaviour.md §13.8)', () => {
  it('writes the bundle with mode 0600, and replaces a file already there whole', async () => {
    const file = join(dir, 'night.json');
    writeFileSync(file, 'an older export', { mode: 0o644 });
    const r = await runCli(['inspect', '--export', file], env());
    expect([r.code, r.stderr]).toEqual([0, `loom: wrote ${file} (mode 0600); open it with: loom inspect ${file}\n`]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const bundle = JSON.parse(readFileSync(file, 'utf8')) as Bundle;
    expect(bundle).toMatchObject({ format: 'loom-inspector-bundle', version: 1 });
    expect(bundle.state.agents.map((a) => a.agent_id)).toContain('leo');
    // No temporary file left beside it.
    expect(readdirSync(dir).filter((f) => f.includes('night.json'))).toEqual(['night.json']);
  });

  it('when a symbolic link waits at the path, then it is refused and what it points to is untouched', async () => {
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'keep me', { mode: 0o644 });
    const link = join(dir, 'link.json');
    symlinkSync(victim, link);
    const r = await runCli(['inspect', '--export', link], env());
    expect([r.code, r.stderr]).toEqual([1, `loom: ${link} is a symbolic link; not written; export to a new file, or over a regular file\n`]);
    expect(readFileSync(victim, 'utf8')).toBe('keep me');
    expect(statSync(victim).mode & 0o777).toBe(0o644);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    // A dangling link (to a file an attacker wants created) is refused too, and nothing is created.
    const dangling = join(dir, 'dangling.json');
    symlinkSync(join(dir, 'created-by-link.json'), dangling);
    expect((await runCli(['inspect', '--export', dangling], env())).code).toBe(1);
    expect(existsSync(join(dir, 'created-by-link.json'))).toBe(false);
  });

  it('when a FIFO or a directory is at the path, then it is refused at once (no reader is waited for)', async () => {
    const fifo = join(dir, 'pipe.json');
    execFileSync('mkfifo', [fifo]);
    const r = await runCli(['inspect', '--export', fifo], env(), 10000);
    expect([r.code, r.stderr]).toEqual([1, `loom: ${fifo} is a FIFO; not written; export to a new file, or over a regular file\n`]);
    const folder = join(dir, 'folder.json');
    mkdirSync(folder);
    const f = await runCli(['inspect', '--export', folder], env());
    expect([f.code, f.stderr]).toEqual([1, `loom: ${folder} is a directory; not written; export to a new file, or over a regular file\n`]);
  });

  it('when given both a file to open and --export, then it is a usage error', async () => {
    const r = await runCli(['inspect', join(dir, 'a.json'), '--export', join(dir, 'b.json')], env());
    expect([r.code, r.stderr]).toEqual([2, 'loom: inspect takes a file to open or --export <file>, not both\n']);
  });
});

interface BundleTopic { topic: string; running: { cmd: string } | null; waiting: Array<{ cmd: string; request_id: string | null }>; recent: Array<{ cmd: string; request_id: string | null }> }
interface BundleAgent { agent_id: string; capabilities: Array<{ token_id: string }>; topics: BundleTopic[] }
interface Bundle { format: string; version: number; exported_at: string; loom_version: string; state: { at: string; version: string; agents: BundleAgent[] }; machines: Record<string, unknown> }

/** Agent leo of GET /inspect/state. */
async function state(): Promise<BundleAgent> {
  const s = await (await fetch(`${d.base}/inspect/state`)).json() as Bundle['state'];
  return s.agents.find((a) => a.agent_id === 'leo') as BundleAgent;
}

async function waitFor(ok: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('condition not met');
}
