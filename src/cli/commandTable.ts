import type { Command } from 'commander';

/*
 * docs/cli.md's table of every command, rendered from the command tree itself (program.ts), so the
 * page cannot miss a command or an option: `npm run docs:cli` writes it between the markers below,
 * test/docs/cliTable.test.ts fails when the page differs from the tree.
 */

/** The lines that enclose the generated table in docs/cli.md. */
export const TABLE_START = '<!-- command table: generated from the command tree by `npm run docs:cli`; do not edit by hand -->';
export const TABLE_END = '<!-- end of command table -->';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** `<id>`, `[file]`, `<ids...>` as commander shows arguments. */
function usageArgs(c: Command): string {
  return c.registeredArguments.map((a) => {
    const name = `${a.name()}${a.variadic ? '...' : ''}`;
    return a.required ? `<${name}>` : `[${name}]`;
  }).join(' ');
}

/** One row per command that runs (groups are named by their subcommands), in the tree's order. */
function rows(c: Command, prefix: string, out: string[]): void {
  // What --help lists: hidden commands (`__complete`, for the completion scripts) stay out; so does `help`.
  for (const sub of c.createHelp().visibleCommands(c)) {
    if (sub.name() === 'help') continue;
    const name = `${prefix} ${sub.name()}`;
    if (sub.commands.length > 0) {
      rows(sub, name, out);
      continue;
    }
    const options = sub.options.filter((o) => !o.hidden).map((o) => `\`${o.flags}\``).join(', ');
    const args = usageArgs(sub);
    out.push(`| \`${cell(args ? `${name} ${args}` : name)}\` | ${cell(options)} | ${cell(sub.description().split('\n')[0])} |`);
  }
}

/** The generated block: the markers, the global options and one row per command. */
export function commandTable(program: Command): string {
  const globals = program.options.filter((o) => !o.hidden).map((o) => `\`${o.flags}\``).join(', ');
  const out = [TABLE_START, '', `Global options (before the topic or subcommand): ${globals}.`, '', '| Command | Options | What it does |', '|---|---|---|'];
  out.push('| `loom <topic> <command…>` |  | Send one slash command to a topic (`loom <topic> -`: the command from stdin) |');
  rows(program, 'loom', out);
  out.push('', TABLE_END);
  return out.join('\n');
}

/** `page` with its generated block replaced by `table` (appended when the page has none). */
export function withCommandTable(page: string, table: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) return `${page.trimEnd()}\n\n## Every command\n\n${table}\n`;
  return page.slice(0, start) + table + page.slice(end + TABLE_END.length);
}
