import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { tempDir } from '../helpers/temp.js';

/**
 * Debian's chromium driven by playwright-core (never a downloaded browser), as
 * test/inspector/browser.e2e.test.ts uses it: on CI (CI=true) a missing browser fails the run,
 * elsewhere the suite is skipped with the reason printed.
 */
export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser suites skip here, or null when they run. */
export function chromiumMissing(suite: string): string | null {
  const missing = existsSync(CHROMIUM) ? null : 'chromium not found: apt-get install chromium';
  if (missing && process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing on CI: .ci/run installs it (apt-get install chromium)`);
  if (missing) process.stderr.write(`${suite}: skipped: ${missing}\n`);
  return missing;
}

/** The page-side probes (test/inspector/pageProbes.js), installed in every page before its own script. */
const PROBES = join(process.cwd(), 'test', 'inspector', 'pageProbes.js');

/** Call one of the page-side probes, e.g. `probe<string[]>(page, 'pastViewport()')`. */
export function probe<T>(page: Page, call: string): Promise<T> {
  return page.evaluate(`window.loomProbes.${call}`) as Promise<T>;
}

/** A headless browser with its own profile folder and the probes, and its first page. */
export async function launchChromium(viewport: { width: number; height: number }): Promise<{ ctx: BrowserContext; page: Page; profile: string }> {
  const profile = tempDir('loom-chromium-');
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  await ctx.addInitScript({ path: PROBES });
  return { ctx, page: ctx.pages()[0] ?? (await ctx.newPage()), profile };
}
