import { ACTION_ID_RE } from '../domain/ids.js';
import { fail, type CommandResult } from '../domain/result.js';
import type { Command, CommandContext, CommandFallback } from './types.js';
import { closestWord } from '../domain/suggest.js';

/**
 * behaviour.md §2.1 item 4: every built-in word is reserved, implemented or not yet, so an action
 * with such an id is reachable only as `/act.<id>`.
 */
export const BUILTIN_WORDS = [
  'help', 'info', 'open', 'back', 'refresh', 'close', 'nav', 'source', 'ls', 'edit', 'write', 'append', 'replace',
  'undo', 'act', 'action', 'set', 'unset', 'exec', 'install', 'uninstall', 'packages', 'events', 'webhook', 'topics',
] as const;

/** The parsed head of a command text (behaviour.md §2.1 steps 1–3). */
export interface ParsedCommand {
  header: string;
  body: string;
  word: string;
  sub: string | null;
  args: string;
}

/** Split cmd into header and body, and the header into word, dotted part and argument text. */
export function parseCommand(cmd: string): ParsedCommand {
  const text = cmd.replace(/\r\n/g, '\n');
  const nl = text.indexOf('\n');
  const header = (nl < 0 ? text : text.slice(0, nl)).trim();
  const body = nl < 0 ? '' : text.slice(nl + 1);
  const m = /^\/(\S*)\s*([\s\S]*)$/.exec(header);
  const full = (m?.[1] ?? '').toLowerCase();
  const dot = full.indexOf('.');
  return {
    header, body,
    word: dot < 0 ? full : full.slice(0, dot),
    sub: dot < 0 ? null : full.slice(dot + 1),
    args: m?.[2] ?? '',
  };
}

/**
 * The command registry. Features add commands by registering them (src/commands/index.ts),
 * never by editing a switch.
 */
export class CommandRegistry {
  private readonly commands = new Map<string, Command>();
  private readonly fallbacks: CommandFallback[] = [];

  /** Register commands; a second registration of a word replaces the first. */
  register(...cmds: Command[]): this {
    for (const c of cmds) this.commands.set(c.name, c);
    return this;
  }

  /** Add a resolver for non-built-in words (actions of the current document). */
  addFallback(fn: CommandFallback): this {
    this.fallbacks.push(fn);
    return this;
  }

  /** The registered command of a word, if any. */
  get(word: string): Command | undefined {
    return this.commands.get(word);
  }

  /** Run one parsed command in its context (behaviour.md §2.1 steps 4–7). */
  async run(ctx: CommandContext): Promise<CommandResult> {
    const cmd = this.commands.get(ctx.word);
    if (cmd) {
      if (!cmd.takesBody && ctx.body.trim() !== '') {
        return fail('INVALID_ARGS', `/${ctx.word} does not take a body (text after the first line)`);
      }
      return cmd.run(ctx);
    }
    if (!(BUILTIN_WORDS as readonly string[]).includes(ctx.word)) {
      for (const fb of this.fallbacks) {
        const r = await fb(ctx);
        if (r) return r;
      }
    }
    if (ctx.session.ref.type === 'hub' && ACTION_ID_RE.test(ctx.word) && ctx.sub === null) {
      return fail('INVALID_TARGET', HUB_ONLY_MESSAGE);
    }
    const shown = ctx.sub === null ? ctx.word : `${ctx.word}.${ctx.sub}`;
    // A near miss of a known command names it, as the CLI does for its own words (`loom stauts`).
    const near = ctx.sub === null ? closestWord(ctx.word, this.commands.keys()) : undefined;
    return fail('COMMAND_UNSUPPORTED', `Unknown command: /${shown}`, { recovery: near ? `did you mean /${near}? /help lists the commands` : '/help lists the commands' });
  }
}

/** behaviour.md §2.12: document commands in a hub. */
export const HUB_ONLY_MESSAGE = 'Hub topics show their page only; open documents in a tab or app topic.';
