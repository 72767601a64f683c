import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Write ES module hooks (for `module.register`) into `dir` that append to `log` the URL of every
 * module loaded whose URL contains one of `parts`; returns the hooks file. The footprint tests use
 * them to see what a process loads.
 */
export function writeLoadHooks(dir: string, log: string, parts: readonly string[]): string {
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(hooks, [
    "import { appendFileSync } from 'node:fs';",
    'let log;',
    `const parts = ${JSON.stringify(parts)};`,
    'export async function initialize(data) { log = data.log; }',
    'export async function load(url, context, next) {',
    '  if (parts.some((p) => url.includes(p))) appendFileSync(log, url + \'\\n\');',
    '  return next(url, context);',
    '}',
  ].join('\n'));
  return hooks;
}
