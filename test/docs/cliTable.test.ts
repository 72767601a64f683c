import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandTable, TABLE_END, TABLE_START } from '../../src/cli/commandTable.js';
import { buildProgram } from '../../src/cli/program.js';

/*
 * docs/cli.md, which the README calls the list of every CLI command, holds a table generated from
 * the command tree (`npm run docs:cli`). A command or option added to the tree and not to the page
 * fails here, naming the difference.
 */
const page = (name: string) => readFileSync(join(process.cwd(), 'docs', name), 'utf8');

describe('docs/cli.md lists every command of the tree', () => {
  it('when the page\'s table is compared with the one the tree renders, then they are the same (run npm run docs:cli)', () => {
    const text = page('cli.md');
    const start = text.indexOf(TABLE_START);
    const end = text.indexOf(TABLE_END);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    expect(text.slice(start, end + TABLE_END.length)).toBe(commandTable(buildProgram()));
  });

  it('when the table is rendered, then it names the daemon options, the sandbox and network flags, loom top and loom trace start', () => {
    const table = commandTable(buildProgram());
    for (const needle of ['`loom top`', '`loom trace start`', '`--sandbox <mode>`', '`--network <policy>`', '`loom start`']) expect(table).toContain(needle);
    expect(table).not.toContain('__complete');
  });
});

describe('the user service and lingering (behaviour.md §17)', () => {
  it('when docs/packaging.md describes loom service install, then it says when loginctl enable-linger is needed', () => {
    const text = page('packaging.md');
    expect(text).toMatch(/loginctl enable-linger/);
    expect(text).toMatch(/log(s|ged)? out/);
  });
});
