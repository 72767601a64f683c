#!/usr/bin/env node
// `npm run docs:cli`: writes docs/cli.md's command table from the command tree of the built CLI
// (src/cli/commandTable.ts). test/docs/cliTable.test.ts fails when the page and the tree differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { buildProgram } = await import(join(root, 'dist', 'cli', 'program.js'));
const { commandTable, withCommandTable } = await import(join(root, 'dist', 'cli', 'commandTable.js'));
const page = join(root, 'docs', 'cli.md');
writeFileSync(page, withCommandTable(readFileSync(page, 'utf8'), commandTable(buildProgram())));
console.log('docs:cli: wrote the command table of docs/cli.md');
