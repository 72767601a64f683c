import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { LoomClient } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { guaranteesSkipReason } from '../helpers/landlock.js';
import { describeUnless } from '../helpers/nativeParts.js';
import { chromiumMissing, launchChromium, probe } from './chromium.js';

/**
 * behaviour.md §13.8 in chromium: the filters kept in the URL (a link shows the same view, a change
 * is written back), and the sandbox on each agent card (§15.5).
 */
const missing = chromiumMissing('test/inspector/filters');
let d: RunningDaemon | undefined;
let ctx: BrowserContext | undefined;
let page: Page;
let profile = '';
const pending: Array<Promise<unknown>> = [];

beforeAll(async () => {
  if (missing) return;
  d = await startDaemon();
  // A workspace agent registers on any machine (behaviour.md §15: refused only when its commands run).
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'leo', sandbox: 'workspace' }) });
  await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: 'ann' }) });
  const ann = new LoomClient(d.base, 'ann');
  expect((await ann.exec('build', '/exec true')).head?.ok).toBe(true);
  expect((await ann.exec('build', '/exec false')).head?.ok).toBe(false);
  expect((await ann.exec('notes', '/exec echo fine')).head?.ok).toBe(true);
  ({ ctx, page, profile } = await launchChromium({ width: 1280, height: 800 }));
}, 60000);

afterAll(async () => {
  await ctx?.close();
  await Promise.allSettled(pending);
  await d?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
}, 60000);

/** What the page shows: each topic as `agent/topic`, and each shown row of its last commands. */
const view = () => probe<Array<{ topic: string; rows: string[] }>>(page, 'topicsShown()');

describeUnless(missing)('filters kept in the URL (behaviour.md §13.8)', () => {
  it('/inspect?failed=1 shows the failed command and hides the topic\'s successful one, and topics with no failure', async () => {
    const base = (d as RunningDaemon).base;
    await page.goto(`${base}/inspect?failed=1`);
    await page.waitForSelector('#conn[data-conn="live"]');
    await page.waitForSelector('article.topic[data-topic="build"]');
    expect(await view()).toEqual([{ topic: 'ann/build', rows: ['failed /exec false'] }]);
    expect(await page.locator('article.topic[data-topic="build"] table.recent caption').textContent()).toBe('1 failed of the last 2 commands');
    expect(await page.locator('#filter-failed').isChecked()).toBe(true);
    expect(await page.locator('#filter-count').textContent()).toBe('showing 1 of 2 topics');
  });

  it('a link with agent, failed and state shows that view; changing a filter rewrites the URL', async () => {
    const base = (d as RunningDaemon).base;
    await page.goto(`${base}/inspect?agent=ann&failed=1&state=idle`);
    await page.waitForSelector('#conn[data-conn="live"]');
    await page.waitForSelector('article.topic[data-topic="build"]');
    expect(await view()).toEqual([{ topic: 'ann/build', rows: ['failed /exec false'] }]);
    expect(await page.locator('#filter-text').inputValue()).toBe('agent:ann');
    expect(await page.locator('#filter-state').inputValue()).toBe('idle');

    await page.locator('#filter-failed').uncheck();
    expect(await page.evaluate('location.search')).toBe('?agent=ann&state=idle');
    await page.waitForSelector('article.topic[data-topic="notes"]');
    expect(await view()).toEqual([
      { topic: 'ann/build', rows: ['failed /exec false', 'ok /exec true'] },
      { topic: 'ann/notes', rows: ['ok /exec echo fine'] },
    ]);
    await page.locator('#filter-text').fill('topic:notes echo');
    expect(await page.evaluate('location.search')).toBe('?topic=notes&q=echo&state=idle');
    expect((await view()).map((t) => t.topic)).toEqual(['ann/notes']);
    // The state filter offers the topic machine's states.
    expect(await page.locator('#filter-state option').allTextContents()).toEqual(expect.arrayContaining(['any', 'idle', 'executing', 'closed']));
    await page.locator('#filter-clear').click();
    expect(await page.evaluate('location.search')).toBe('');
    expect((await view()).map((t) => t.topic)).toEqual(['ann/build', 'ann/notes']);
  });

  it('a state filter shows the topics in that state only', async () => {
    const base = (d as RunningDaemon).base;
    const ann = new LoomClient(base, 'ann');
    pending.push(ann.exec('slow', '/exec sleep 3'));
    await page.goto(`${base}/inspect?state=executing`);
    await page.waitForSelector('article.topic[data-topic="slow"][data-state="executing"]');
    expect((await view()).map((t) => t.topic)).toEqual(['ann/slow']);
  });
});

describeUnless(missing)('the sandbox on each agent card (behaviour.md §13.8, §15.5)', () => {
  it('an agent registered with sandbox workspace shows workspace and its network policy; the other shows none', async () => {
    const base = (d as RunningDaemon).base;
    await page.goto(`${base}/inspect`);
    await page.waitForSelector('section.agent[data-agent="leo"] .sandbox');
    const sandbox = (agent: string) => page.locator(`section.agent[data-agent="${agent}"] .sandbox`);
    expect(await sandbox('leo').getAttribute('data-mode')).toBe('workspace');
    expect(await sandbox('leo').textContent()).toBe('sandbox workspace · network public · no recent denials');
    expect(await sandbox('ann').textContent()).toBe('sandbox none');
  });

  const noSandbox = guaranteesSkipReason();
  (noSandbox ? it.skip : it)(`a connection the sandbox refused shows among the agent's recent denials${noSandbox ? ` (skipped: ${noSandbox})` : ''}`, async () => {
    const base = (d as RunningDaemon).base;
    const leo = new LoomClient(base, 'leo');
    // Loopback is not public: the egress proxy refuses it and counts it against leo.
    const r = await leo.exec('net', '/exec curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:9/');
    expect(r.body).toContain('403');
    await page.goto(`${base}/inspect`);
    const denial = page.locator('section.agent[data-agent="leo"] .sandbox ul.denials li[data-kind="network"]');
    await denial.first().waitFor();
    expect(await denial.first().textContent()).toMatch(/^\d\d:\d\d:\d\d network 127\.0\.0\.1:9 \(.+\)$/);
    expect(await page.locator('section.agent[data-agent="leo"] .sandbox .denials-head').textContent()).toBe('1 recent denial');
  }, 30000);
});
