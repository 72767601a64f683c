import { randomBytes } from 'node:crypto';

/**
 * The completion protocol of persistent shells (behaviour.md §8.3): the lines Loom types into the
 * shell and the scanner that finds a command's sentinel in the shell's output.
 *
 * Every command gets a fresh sentinel `__LOOM_DONE_<16 hex>__`. The typed line holds it only in two
 * pieces (`'__LOOM_DONE_' '<hex>__'`), so neither an echo of the line nor anything a command prints
 * without knowing the fresh hex can end a command early. `builtin` keeps a user's `printf` function
 * or alias from taking over the sentinel; the leading `\n` puts it at the start of a line.
 */

let pool = Buffer.alloc(0);
let poolAt = 0;

/** A fresh sentinel id: 16 hex digits from the CSPRNG (drawn 512 at a time: one system call each). */
export function freshHex(): string {
  if (poolAt + 8 > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  poolAt += 8;
  return pool.toString('hex', poolAt - 8, poolAt);
}

/** The bytes that start sentinel `hex` in the output (the rest of its line is `<status>|<cwd>`). */
export function sentinelTag(hex: string): Buffer {
  return Buffer.from(`\n__LOOM_DONE_${hex}__|`);
}

/** The part of a typed line that prints sentinel `hex` with the last status and the cwd. */
export function sentinelCommand(hex: string): string {
  return `__loom_rc=$?; \\builtin printf '\\n%s%s|%d|%s\\n' '__LOOM_DONE_' '${hex}__' "$__loom_rc" "$PWD"`;
}

/** Quote a path for the shell (single quotes; a quote inside as '\''). */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The first input of a shell: no echo and no CR added to output lines (byte counts stay the
 * program's own), no history, no line editing (readline would echo and redraw), no job control (every
 * command stays in the shell's process group, so a kill of the group reaches it). On pipes, stderr
 * joins stdout first. With `input` (the shell's command pipe, effects/shellInput.ts) the shell reads
 * every later line from there, not from the terminal; it exits if it cannot open it. (Plain `exec`:
 * under `builtin` the redirection would be undone when it returns; no alias exists yet.)
 */
export function initLine(hex: string, onPty: boolean, input?: string): string {
  const setup = onPty ? 'stty -echo -onlcr 2>/dev/null' : 'exec 2>&1';
  const channel = input === undefined ? '' : ` exec <${shellQuote(input)} || exit 1;`;
  return `${setup}; set +o history +o emacs +o vi +m;${channel} ${sentinelCommand(hex)}\n`;
}

/** The line that runs the script in `file`: sourced (cd, export, functions and aliases stay), stdin /dev/null. */
export function runLine(file: string, hex: string): string {
  return `. ${shellQuote(file)} </dev/null; ${sentinelCommand(hex)}\n`;
}

/** A line that prints `message` to stderr and ends with sentinel `hex` and status 1 (the script could not be written). */
export function failLine(message: string, hex: string): string {
  return `\\builtin printf '%s\\n' ${shellQuote(message)} >&2; (exit 1); ${sentinelCommand(hex)}\n`;
}

/** The line sent after ^C: only a sentinel, which tells when the shell listens again. */
export function recoveryLine(hex: string): string {
  return `${sentinelCommand(hex)}\n`;
}

/** What follows a sentinel: the status and the cwd the shell reported. */
export interface SentinelReport {
  exitCode: number;
  cwd: string;
}

/** Parse `<status>|<cwd>` (a CR left by a user's `stty onlcr` is dropped). */
export function parseReport(rest: string): SentinelReport {
  const bar = rest.indexOf('|');
  const code = Number.parseInt(bar < 0 ? rest : rest.slice(0, bar), 10);
  return { exitCode: Number.isFinite(code) ? code : 1, cwd: bar < 0 ? '' : rest.slice(bar + 1).replace(/\r$/, '') };
}

/**
 * Finds one sentinel in a byte stream that arrives in chunks. Bytes before it go to `onBytes` at
 * once, except an end of a chunk that could be the start of the sentinel (held back until the next
 * chunk tells); once the sentinel's line is complete, `push` returns its report.
 */
export class SentinelScanner {
  private carry: Buffer = Buffer.alloc(0);
  private line: Buffer | null = null;

  constructor(private readonly tag: Buffer, private readonly onBytes: (bytes: Buffer) => void) {}

  /** Feed a chunk; returns the report once the sentinel line has ended, else null. */
  push(chunk: Buffer): SentinelReport | null {
    if (this.line) return this.endOfLine(Buffer.concat([this.line, chunk]));
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const at = buf.indexOf(this.tag);
    if (at >= 0) {
      if (at > 0) this.onBytes(buf.subarray(0, at));
      this.carry = Buffer.alloc(0);
      return this.endOfLine(buf.subarray(at + this.tag.length));
    }
    const keep = this.partialTag(buf);
    if (buf.length > keep) this.onBytes(buf.subarray(0, buf.length - keep));
    this.carry = Buffer.from(buf.subarray(buf.length - keep));
    return null;
  }

  /** Length of the longest end of `buf` that is a start of the sentinel (what must be held back). */
  private partialTag(buf: Buffer): number {
    for (let n = Math.min(buf.length, this.tag.length - 1); n > 0; n--) {
      if (buf.compare(this.tag, 0, n, buf.length - n) === 0) return n;
    }
    return 0;
  }

  /** The stream ended without the sentinel: release what was held back. */
  flush(): void {
    if (this.carry.length > 0) this.onBytes(this.carry);
    this.carry = Buffer.alloc(0);
  }

  private endOfLine(line: Buffer): SentinelReport | null {
    const nl = line.indexOf(10);
    if (nl < 0) {
      this.line = line;
      return null;
    }
    this.line = null;
    return parseReport(line.subarray(0, nl).toString('utf8'));
  }
}
