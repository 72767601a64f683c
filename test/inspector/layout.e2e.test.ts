import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { describeUnless } from '../helpers/nativeParts.js';
import { chromiumMissing, launchChromium } from './chromium.js';

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

/** Every visible element whose box reaches past the viewport's right (or left) edge. */
const pastViewport = () => page.evaluate(() => {
  const out: string[] = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right > window.innerWidth + 0.5 || r.left < -0.5) out.push(`${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''} ${Math.round(r.left)}–${Math.round(r.right)}: ${(el.textContent ?? '').slice(0, 40)}`);
  }
  return out;
});

/** Pairs of different text nodes whose line boxes overlap (by more than a pixel each way). */
const overlappingTexts = () => page.evaluate(() => {
  const boxes: Array<{ text: string; node: number; x: number; y: number; r: number; b: number }> = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n = 0;
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    n++;
    if (!t.textContent?.trim() || t.parentElement?.closest('title, option, script, style')) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    for (const r of range.getClientRects()) {
      if (r.width < 1 || r.height < 1) continue;
      boxes.push({ text: t.textContent.trim().slice(0, 30), node: n, x: r.left, y: r.top, r: r.right, b: r.bottom });
    }
  }
  const out: string[] = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i], boxes[j]];
      if (a.node === b.node) continue;
      const w = Math.min(a.r, b.r) - Math.max(a.x, b.x);
      const h = Math.min(a.b, b.b) - Math.max(a.y, b.y);
      if (w > 1 && h > 1) out.push(`"${a.text}" × "${b.text}"`);
    }
  }
  return out;
});

/** Words of commands split over two lines (a word that fits its cell must stay whole). */
const brokenWords = () => page.evaluate(() => {
  const out: string[] = [];
  for (const code of document.querySelectorAll('article.topic code')) {
    const text = code.firstChild;
    if (!(text instanceof Text)) continue;
    let at = 0;
    for (const word of (text.textContent ?? '').split(' ')) {
      const range = document.createRange();
      range.setStart(text, at);
      range.setEnd(text, at + word.length);
      at += word.length + 1;
      const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      if (word.length > 0 && word.length < 30 && lines.size > 1) out.push(word);
    }
  }
  return out;
});

describeUnless(missing)('the page at 700 px (behaviour.md §13.8 "Layout")', () => {
  it('with a queue of three and a topic selected: nothing past the viewport, no two texts overlap, no command word broken', async () => {
    const base = (d as RunningDaemon).base;
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // What the badge and the agents said at each change, from before the page's script runs.
    await page.addInitScript(() => {
      const seen: Array<[string, boolean]> = [];
      (window as unknown as { seen: typeof seen }).seen = seen;
      new MutationObserver(() => {
        const badge = document.getElementById('conn')?.textContent ?? '';
        const waiting = (document.getElementById('agents')?.textContent ?? '').includes('Waiting for the daemon');
        const last = seen[seen.length - 1];
        if (!last || last[0] !== badge || last[1] !== waiting) seen.push([badge, waiting]);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
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
    await page.waitForFunction(() => document.querySelectorAll('#timeline li').length >= 10);

    expect(await pastViewport()).toEqual([]);
    expect(await overlappingTexts()).toEqual([]);
    expect(await brokenWords()).toEqual([]);
    // The badge said `live` only once the agents were drawn.
    const seen = await page.evaluate(() => (window as unknown as { seen: Array<[string, boolean]> }).seen);
    expect(seen.filter(([badge, waiting]) => badge === 'live' && waiting)).toEqual([]);
    expect(seen.some(([badge]) => badge === 'live')).toBe(true);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'inspector-700.png'), fullPage: true });
    expect(errors).toEqual([]);
  }, 60000);

  it('list numbers from 10 up fit beside their list, and the last commands\' headers stand apart', async () => {
    const fit = await page.evaluate(() => {
      const list = document.getElementById('timeline') as HTMLElement;
      const probe = document.createElement('span');
      probe.textContent = `${list.children.length}. `;
      probe.style.font = getComputedStyle(list).font;
      probe.style.position = 'absolute';
      document.body.append(probe);
      const need = probe.getBoundingClientRect().width;
      probe.remove();
      return { items: list.children.length, need, room: parseFloat(getComputedStyle(list).paddingLeft) };
    });
    expect(fit.items).toBeGreaterThanOrEqual(10);
    expect(fit.room).toBeGreaterThanOrEqual(fit.need);
    const heads = await page.locator('article.topic[data-topic="q"] table.recent thead th').evaluateAll((ths) => ths.map((th) => {
      const r = document.createRange();
      r.selectNodeContents(th);
      const text = r.getBoundingClientRect();
      return { text: th.textContent, right: text.right, next: (th.nextElementSibling as HTMLElement | null)?.getBoundingClientRect().left ?? Infinity, padding: parseFloat(getComputedStyle(th).paddingRight) };
    }));
    expect(heads.map((x) => x.text)).toEqual(['result', 'command', 'ran', 'waited', 'via']);
    for (const x of heads) expect([x.text, x.padding >= 6 && x.right + 6 <= x.next]).toEqual([x.text, true]);
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
    const crossings = await page.locator('#diagram svg').evaluate((svg) => {
      const out: string[] = [];
      const paths = [...svg.querySelectorAll<SVGPathElement>('path.edge')];
      for (const t of svg.querySelectorAll<SVGTextElement>('text.edge-label')) {
        const b = t.getBBox();
        for (const p of paths) {
          if (p.getAttribute('data-edge') === t.getAttribute('data-edge')) continue;
          for (let s = 0, len = p.getTotalLength(); s <= len; s += 1) {
            const pt = p.getPointAtLength(s);
            if (pt.x > b.x && pt.x < b.x + b.width && pt.y > b.y && pt.y < b.y + b.height) {
              out.push(`${t.getAttribute('data-edge')} on ${p.getAttribute('data-edge')}`);
              break;
            }
          }
        }
      }
      return out;
    });
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
