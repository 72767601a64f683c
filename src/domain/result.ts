import type { SandboxMeta } from './denials.js';

/** behaviour.md §1.6: the closed set of command error codes (SANDBOX_UNAVAILABLE: §15). */
export type CommandCode =
  | 'NOT_FOUND' | 'INVALID_ARGS' | 'INVALID_TARGET' | 'INVALID_PATH' | 'FORBIDDEN' | 'CONFLICT'
  | 'COMMAND_UNSUPPORTED' | 'ENV_REQUIRED' | 'HTTP_ERROR' | `EXIT_${number}` | 'TIMEOUT'
  | 'INSTALL_FAILED' | 'BUSY' | 'INTERNAL_ERROR' | 'SANDBOX_UNAVAILABLE';

/** spec §2 head.meta: the topic's current document, or null. */
export interface DocMeta {
  uri: string;
  title: string | null;
  current_block: string | null;
}

/** What a command produces: success flag, code and the body after the `re:` line (behaviour.md §1.5). */
export interface CommandResult {
  ok: boolean;
  code: CommandCode | null;
  body: string;
  /** behaviour.md §15.5: what the sandbox refused a failed confined command (head.meta.sandbox). */
  sandbox?: SandboxMeta;
}

/** Join lines per behaviour.md §1.5: `\n`, no `\r`, trailing blank lines removed. */
export function joinLines(lines: string[]): string {
  const joined = lines.join('\n');
  const text = joined.includes('\r') ? joined.replace(/\r/g, '') : joined;
  // Every command's output passes here: the blank tail is cut from the end of the one string,
  // without splitting it into lines and joining them again.
  let end = text.length;
  while (end > 0) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    if (text.slice(start, end).trim() !== '') break;
    end = Math.max(start - 1, 0);
  }
  return end === text.length ? text : text.slice(0, end);
}

/** A content command's success: system line, `---`, content (behaviour.md §1.5). */
export function content(system: string, lines: string[] | string): CommandResult {
  const body = Array.isArray(lines) ? lines : [lines];
  return { ok: true, code: null, body: joinLines([system, '---', ...body]) };
}

/** A confirmation command's success: one line per change, optional `next:` (behaviour.md §1.5). */
export function confirm(lines: string[] | string): CommandResult {
  return { ok: true, code: null, body: joinLines(Array.isArray(lines) ? lines : [lines]) };
}

/** A failure body: `ERROR(<CODE>): <message>`, details, optional `Recovery:` last (behaviour.md §1.5). */
export function fail(code: CommandCode, message: string, opts: { details?: string[]; recovery?: string } = {}): CommandResult {
  const lines = [`ERROR(${code}): ${message}`, ...(opts.details ?? [])];
  if (opts.recovery) lines.push(`Recovery: ${opts.recovery}`);
  return { ok: false, code, body: joinLines(lines) };
}

/** behaviour.md §1.7: the `next:` hint line. */
export function nextLine(items: string[]): string {
  return `next: ${items.join(' · ')}`;
}
