import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { describeUnless } from '../helpers/nativeParts.js';
import { chromiumMissing, launchChromium } from './chromium.js';

/**
 * behaviour.md §13.8 in a real browser (Debian's chromium through playwright-core, as
 * browser.e2e.test.ts): `/inspect?trace=<id>` of a recorded queue of three shows `Step k of N`,
 * `Next step` advances it, and at each step the topic's card shows the state and queue the steps
 * document says. `LOOM_DOCS_SCREENSHOTS=1` also writes docs/inspector-steps.png.
 */
const missing = chromiumMissing('test/inspector/steps');
const ARTIFACTS = join(process.cwd(), 'test-artifacts');

let d: RunningDaemon | undefined;
let ctx: BrowserContext | undefined;
let page: Page;
let profile = '';

beforeAll(async () => {
  if (missing) return;
  d = await startDaemon();
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo' }) });
  ({ ctx, page, profile } = await launchChromium({ width: 1280, height: 720 }));
}, 60000);

afterAll(async () => {
  await ctx?.close();
  await d?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
}, 60000);

interface StepTopic { topic: string; state: string; running: { cmd: string } | null; waiting: Array<{ cmd: string }>; session: { variables: string[] } }
interface StepsDoc { steps: Array<{ label: string; state: { agents: Array<{ agent_id: string; topics: StepTopic[] }> } }> }

describeUnless(missing)('a recorded trace stepped through in chromium (behaviour.md §13.8)', () => {
  it('shows Step k of N; Next step and Previous step move it, and the card shows the queue of each step', async () => {
    const base = (d as RunningDaemon).base;
    const c = new LoomClient(base, 'leo');
    const trace = (await (await fetch(`${base}/traces`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo' }) })).json()) as { trace_id: string };
    await c.exec('q', '/set {city} = "Oslo"');
    const first = c.exec('q', '/exec sleep 0.5 && echo one');
    await new Promise((r) => setTimeout(r, 150));
    await Promise.all([first, c.exec('q', '/exec echo two'), c.exec('q', '/exec echo three')]);
    await fetch(`${base}/traces/${trace.trace_id}`, { method: 'DELETE' });
    const doc = (await (await fetch(`${base}/inspect/trace/${trace.trace_id}`)).json()) as StepsDoc;
    const n = doc.steps.length;
    const expected = (k: number) => {
      const t = doc.steps[k - 1].state.agents.find((a) => a.agent_id === 'leo')?.topics.find((x) => x.topic === 'q');
      return t ? { state: t.state, running: t.running?.cmd ?? null, waiting: t.waiting.map((w) => w.cmd), vars: t.session.variables.length ? `variables ${t.session.variables.join(', ')}` : 'no variables' } : null;
    };
    // The recording has the queue the page must show at some step: one running, two waiting.
    expect(doc.steps.some((_s, i) => expected(i + 1)?.waiting.length === 2)).toBe(true);

    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/inspect?trace=${trace.trace_id}`);
    await page.getByText(`Step 1 of ${n}`).waitFor();
    const badge = await page.locator('#conn').textContent();
    expect(badge).toMatch(/^recorded .+ — not live$/);
    await expect(page.getByLabel('Previous step').isDisabled()).resolves.toBe(true);
    // One evaluation per look; no card (the topic not yet in the trace) is null.
    const look = async () => (await page.locator('article.topic[data-topic="q"]').evaluateAll((cards) => cards.map((card) => ({
      state: card.getAttribute('data-state'),
      running: card.querySelector('.running code')?.textContent ?? null,
      waiting: [...card.querySelectorAll('ol.waiting li code')].map((x) => x.textContent),
      vars: card.querySelector('.step-vars')?.textContent ?? null,
    }))))[0] ?? null;
    for (let k = 1; k <= n; k++) {
      if (k > 1) {
        await page.getByLabel('Next step').click();
        await page.getByText(`Step ${k} of ${n}`).waitFor();
      }
      expect([k, await look()]).toEqual([k, expected(k)]);
      if (expected(k)?.waiting.length === 2) {
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.locator('article.topic[data-topic="q"]').click();
        await page.locator('#diagram svg').waitFor();
        await page.screenshot({ path: join(ARTIFACTS, 'inspector-steps.png') });
        if (process.env.LOOM_DOCS_SCREENSHOTS === '1') await page.screenshot({ path: join(process.cwd(), 'docs', 'inspector-steps.png') });
      }
    }
    await expect(page.getByLabel('Next step').isDisabled()).resolves.toBe(true);
    await page.getByLabel('Previous step').click();
    await page.getByText(`Step ${n - 1} of ${n}`).waitFor();
    expect(await look()).toEqual(expected(n - 1));
    // The slider jumps to any step.
    await page.locator('input[type=range]').fill('2');
    await page.getByText(`Step 2 of ${n}`).waitFor();
    expect(errors).toEqual([]);
  }, 60000);

  it('an unknown trace says so on the page, and never claims live', async () => {
    const base = (d as RunningDaemon).base;
    await page.goto(`${base}/inspect?trace=trc_01ARZ3NDEKTSV4RRFFQ69G5FAV`);
    await page.getByText('This trace cannot be shown: Unknown trace: trc_01ARZ3NDEKTSV4RRFFQ69G5FAV').waitFor();
    expect(await page.locator('#conn').textContent()).toBe('not live');
  }, 30000);
});
