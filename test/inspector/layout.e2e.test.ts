import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { describeUnless } from '../helpers/nativeParts.js';
import { chromiumMissing, launchChromium, probe } from './chromium.js';

/**
 * behaviour.md §13.8 "Layout" in chromium at 700 px: nothing past the viewport, no two texts over
 * each other, no word of a command broken, list numbers and table headers apart, the badge says
 * `live` only with a snapshot, and each diagram edge has at most three label lines, none on another
 * edge's line. It also takes the README's screenshot (docs/inspector.png, rewritten when
 * UPDATE_DOCS_SCREENSHOT=1).
 */
const missing = chromiumMissing('test/inspector/layout');
const ARTIFACTS = join(process.cwd(), 'test-artifacts');
let d: RunningDaemon | undefined;
let ctx: BrowserContext | undefined;
let page: Page;
let profile = '';
const pending: Array<Promise<unknown>> = [];

beforeAll(async () => {
  if (missing) return;
  d = await startDaemon();
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo', sandbox: 'workspace' }) });
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'ann' }) });
  const c = new LoomClient(d.base, 'ann');
  // More than ten changes in the history of `q` (two a command), and a failed one among the last commands.
  for (let i = 0; i < 6; i++) await c.exec('q', `/exec echo warm-up-${i}`);
  await c.exec('q', '/exec false');
  ({ ctx, page, profile } = await launchChromium({ width: 700, height: 1000 }));
}, 60000);

afterAll(async () => {
  await ctx?.close();
  // Closing the topic ends its queue: its commands need not run out.
  if (d) await fetch(`${d.base}/sessions/ann/q`, { method: 'DELETE' });
  await Promise.allSettled(pending);
  await d?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
}, 60000);

const pastViewport = () => probe<string[]>(page, 'pastViewport()');

describeUnless(missing)('the page at 700 px (behaviour.md §13.8 "Layout")', () => {
  it('with a queue of three and a topic selected: nothing past the viewport, no two texts overlap, no command word broken', async () => {
    const base = (d as RunningDaemon).base;
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/inspect`);
    await page.waitForSelector('#conn[data-conn="live"]');
    const c = new LoomClient(base, 'ann');
    pending.push(c.exec('q', '/exec sleep 30 && echo a-long-running-command-that-explains-itself').catch(() => undefined));
    const card = page.locator('article.topic[data-topic="q"]');
    await card.locator('.running').filter({ hasText: 'sleep 30' }).waitFor();
    for (let i = 1; i <= 2; i++) {
      pending.push(c.exec('q', `/exec sleep 1 # waiting-${i}`, `request-${i}`).catch(() => undefined));
      await card.locator('ol.waiting li').nth(i - 1).waitFor();
    }
    await card.click();
    await page.waitForSelector('#diagram svg[data-machine="topicQueue"] g.node.current[data-state="executing"]');
    await page.locator('#timeline li').nth(9).waitFor();

    expect(await pastViewport()).toEqual([]);
    expect(await probe<string[]>(page, 'overlappingTexts()')).toEqual([]);
    expect(await probe<string[]>(page, 'brokenWords()')).toEqual([]);
    // The badge said `live` only once the agents were drawn (watched from before the page's script ran).
    const seen = await probe<Array<[string, boolean]>>(page, 'badgeSeen');
    expect(seen.filter(([badge, waiting]) => badge === 'live' && waiting)).toEqual([]);
    expect(seen.some(([badge]) => badge === 'live')).toBe(true);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'inspector-700.png'), fullPage: true });
    expect(errors).toEqual([]);
  }, 60000);

  it('list numbers from 10 up fit beside their list, and the last commands\' headers stand apart', async () => {
    const fit = await probe<{ items: number; need: number; room: number }>(page, 'listNumbersFit()');
    expect(fit.items).toBeGreaterThanOrEqual(10);
    expect(fit.room).toBeGreaterThanOrEqual(fit.need);
    const heads = await probe<Array<{ text: string; apart: boolean }>>(page, "headerGaps('q')");
    expect(heads).toEqual(['result', 'command', 'ran', 'waited', 'via'].map((text) => ({ text, apart: true })));
  });

  it('each diagram edge has at most three label lines (+N more, the full list on hover) and no label lies on another edge\'s line', async () => {
    const labels = await page.locator('#diagram text.edge-label').evaluateAll((ts) => ts.map((t) => ({
      edge: t.getAttribute('data-edge'), events: Number(t.getAttribute('data-events')),
      lines: [...t.querySelectorAll('tspan')].map((s) => s.textContent), title: t.querySelector('title')?.textContent ?? null,
    })));
    expect(labels.length).toBeGreaterThanOrEqual(4);
    for (const l of labels) {
      expect(l.lines.length).toBeLessThanOrEqual(3);
      if (l.events > 3) {
        expect([l.edge, l.lines[2]]).toEqual([l.edge, `+${l.events - 2} more`]);
        expect(l.title?.split('\n')).toHaveLength(l.events);
        expect(l.title?.split('\n').slice(0, 2)).toEqual(l.lines.slice(0, 2));
      } else expect([l.edge, l.title]).toEqual([l.edge, null]);
    }
    // The edges out of `executing` carried a block of seven labels: now three lines at most.
    expect(labels.find((l) => l.edge === 'executing→executing')?.lines).toHaveLength(3);
    const crossings = await probe<string[]>(page, 'labelsOnOtherEdges()');
    expect(crossings).toEqual([]);
  });

  it('takes the README\'s screenshot at 1280 px', async () => {
    await page.setViewportSize({ width: 1280, height: 760 });
    await page.goto(`${(d as RunningDaemon).base}/inspect`);
    await page.waitForSelector('#conn[data-conn="live"]');
    await page.locator('article.topic[data-topic="q"]').click();
    await page.waitForSelector('#diagram svg[data-machine="topicQueue"]');
    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, 'inspector.png');
    await page.screenshot({ path: shot });
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1') copyFileSync(shot, join(process.cwd(), 'docs', 'inspector.png'));
    expect(await pastViewport()).toEqual([]);
  });
});
