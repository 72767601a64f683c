import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { LoomClient } from '../../src/client/index.js';
import { describeUnless } from '../helpers/nativeParts.js';
import { CLI, runCli, startDaemon, tempDir } from '../helpers/daemon.js';
import { chromiumMissing, launchChromium, probe } from './chromium.js';

/**
 * behaviour.md §13.8 "open without a daemon": `loom inspect <bundle>` serves the page for a bundle on
 * a free loopback port until interrupted; the page draws the bundle's agents and says
 * `recorded <time> — not live`, never `live`, and opens no WebSocket.
 */
const missing = chromiumMissing('test/inspector/offline');
const dir = tempDir('loom-offline-e2e-');
const bundle = join(dir, 'night.json');
let ctx: BrowserContext | undefined;
let page: Page;
let profile = '';
let server: ChildProcess | undefined;

beforeAll(async () => {
  const d = await startDaemon();
  try {
    for (const agent of ['ann', 'leo']) await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: agent }) });
    await new LoomClient(d.base, 'leo').exec('build', '/exec echo recorded-run');
    const r = await runCli(['inspect', '--export', bundle], { SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir });
    expect(r.code).toBe(0);
  } finally {
    await d.stop();
  }
  if (missing) return;
  ({ ctx, page, profile } = await launchChromium({ width: 1280, height: 800 }));
}, 60000);

afterAll(async () => {
  await ctx?.close();
  if (server && server.exitCode === null) server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  if (profile) rmSync(profile, { recursive: true, force: true });
}, 30000);

/** Start `loom inspect <file>` and read the URL it prints. */
function serve(file: string): Promise<{ url: string; exit: Promise<number | null>; stderr: () => string }> {
  const proc = spawn(process.execPath, [CLI, 'inspect', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_PORT: '1' } });
  server = proc;
  let out = '';
  let err = '';
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  proc.stderr?.on('data', (c: Buffer) => { err += c.toString(); });
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no URL printed: ${out} ${err}`)), 15000);
    proc.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) {
        clearTimeout(t);
        resolve({ url: out.split('\n')[0], exit, stderr: () => err });
      }
    });
    proc.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

describeUnless(missing)('loom inspect <bundle> in chromium, no daemon running (behaviour.md §13.8)', () => {
  it('shows the bundle\'s agents and its last command, says recorded … — not live, never live, and opens no WebSocket; SIGINT ends it', async () => {
    const s = await serve(bundle);
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/inspect$/);
    const errors: string[] = [];
    const sockets: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('websocket', (ws) => sockets.push(ws.url()));
    await page.goto(s.url);
    await page.waitForSelector('#conn[data-conn="recorded"]');
    await page.waitForSelector('section.agent[data-agent="leo"] article.topic[data-topic="build"]');
    expect(await page.locator('#conn').textContent()).toMatch(/^recorded \d{4}-\d\d-\d\d \d\d:\d\d:\d\d — not live$/);
    expect(await page.locator('section.agent').evaluateAll((els) => els.map((e) => e.getAttribute('data-agent')))).toEqual(['ann', 'leo']);
    expect(await page.locator('article.topic[data-topic="build"] table.recent tbody tr.ok code').allTextContents()).toEqual(['/exec echo recorded-run']);
    await page.locator('article.topic[data-topic="build"]').click();
    await page.waitForSelector('#diagram svg[data-machine="topicQueue"] g.node.current[data-state="idle"]');
    await page.waitForTimeout(600);
    // Every text the badge showed, from before the page's own script ran.
    const badges = await probe<Array<[string, boolean]>>(page, 'badgeSeen');
    expect(badges.length).toBeGreaterThan(0);
    expect(badges.filter(([b]) => /\blive\b/.test(b) && !b.endsWith('not live'))).toEqual([]);
    expect(await page.locator('#gone').isHidden()).toBe(true);
    expect(sockets).toEqual([]);
    expect(errors).toEqual([]);

    expect(s.stderr()).toMatch(/^loom: serving .*night\.json \(bundle, recorded \d{4}-\d\d-\d\dT[\d:.]+Z\) read-only; Ctrl-C stops\n$/);
    server?.kill('SIGINT');
    expect(await s.exit).toBe(0);
  }, 60000);

  it('refuses what is not a bundle with one line and a non-zero exit', async () => {
    const notBundle = join(dir, 'other.json');
    writeFileSync(notBundle, '{"format":"something-else"}');
    const r = await runCli(['inspect', notBundle]);
    expect([r.code, r.stderr]).toEqual([1, `loom: ${notBundle}: not a loom-inspector-bundle\n`]);
    const trace = join(dir, 't.jsonl');
    writeFileSync(trace, '{"loom_trace":1,"created_at":"2026-01-05T10:00:00.000Z"}\n{"seq":1,"kind":"exec"}\n');
    const damaged = await runCli(['inspect', trace]);
    expect([damaged.code, damaged.stderr]).toEqual([1, expect.stringMatching(new RegExp(`^loom: ${trace}: .*line 2.*\n$`))]);
    expect((await runCli(['--json', 'inspect', bundle])).code).toBe(2);
  });
});

describeUnless(missing)('loom inspect <trace file> (behaviour.md §13.8, no daemon)', () => {
  it('serves the trace in step mode: Step k of N, and Next step moves through the stepper\'s steps', async () => {
    const trace = join(dir, 'queue.jsonl');
    writeFileSync(trace, readFileSync(join(process.cwd(), 'examples', 'traces', 'queue-429.jsonl')));
    const s = await serve(trace);
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/inspect\?trace=file$/);
    const steps = await (await fetch(new URL('/inspect/trace/file', s.url))).json() as { format: string; steps: Array<{ seq: number }> };
    expect(steps.format).toBe('loom-inspector-steps');
    expect(steps.steps.length).toBeGreaterThan(2);
    await page.goto(s.url);
    const where = page.getByText(/^Step \d+ of \d+$/);
    await where.waitFor();
    const first = await where.textContent();
    await page.getByRole('button', { name: 'Next step' }).click();
    const second = await where.textContent();
    expect(second).not.toBe(first);
    expect(second).toMatch(new RegExp(`of ${steps.steps.length}$`));
    server?.kill('SIGINT');
    expect(await s.exit).toBe(0);
  }, 60000);
});
