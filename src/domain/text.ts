/**
 * Small text helpers shared by commands and the CLI (behaviour.md §2.13: counts are pluralised,
 * durations are shown in human units).
 */

/** `1 event`, `2 events`, `0 events`; `many` defaults to `one` + `s`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

const UNITS: Array<[string, number]> = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]];

/**
 * A duration in the largest unit that divides it exactly (`30d`, `90s`, `1500ms`): the same
 * notation the CLI accepts (`^\d+(ms|s|m|h|d)$`), so what is shown can be typed back.
 */
export function durationText(ms: number): string {
  for (const [unit, size] of UNITS) if (ms > 0 && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/**
 * Pad columns of rows to the longest value of each column (behaviour.md §2.11 "padded to the
 * longest value", §2.13 "tables are aligned"); the last column is not padded.
 */
export function columns(rows: string[][], indent = '  '): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => { widths[i] = Math.max(widths[i] ?? 0, [...c].length); });
  return rows.map((r) => indent + r.map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i] - [...c].length))).join('  ').trimEnd());
}

/** C0 controls, DEL and C1 controls: the code points a terminal may act on instead of showing. */
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/g;

const hex2 = (c: string) => c.charCodeAt(0).toString(16).padStart(2, '0');

/**
 * `text` with every control character shown as `\xNN` (ESC as `\x1b`, LF as `\x0a`), for printing
 * text someone else wrote (a trace file, a daemon's answer) to a terminal: an escape sequence in it
 * would otherwise retitle the window, clear the screen or hide lines. A backslash is left as it is,
 * so this is for showing, not for reading back. Split text into lines first to keep its line breaks.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROL_RE, (c) => `\\x${hex2(c)}`);
}

/**
 * JSON.stringify, with the C1 controls and DEL that JSON allows raw written as `\u00NN`: the same
 * value to a JSON reader, and nothing a terminal acts on when the line is printed (C0 controls are
 * already escaped by JSON itself).
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\u009f]/g, (c) => `\\u00${hex2(c)}`);
}
