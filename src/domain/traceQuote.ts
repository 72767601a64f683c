/** Bounds for reading traces and quoting bad values in their errors (behaviour.md §14.2). */

/** behaviour.md §14.2: the longest line a trace may hold (a recorded step is at most a few MiB). */
export const TRACE_LINE_MAX_BYTES = 16 * 1024 * 1024;
/** How much of a bad value an error quotes: enough to recognise it, never the whole of a huge one. */
export const QUOTE_MAX_CHARS = 200;

/** A value as JSON for an error text, cut after QUOTE_MAX_CHARS characters with the full length said. */
export function quoted(value: unknown): string {
  // A huge string is cut before it is copied into JSON.
  if (typeof value === 'string' && value.length > QUOTE_MAX_CHARS) return `${JSON.stringify(value.slice(0, QUOTE_MAX_CHARS))}… (${value.length} characters)`;
  const json = JSON.stringify(value) ?? String(value);
  return json.length <= QUOTE_MAX_CHARS ? json : `${json.slice(0, QUOTE_MAX_CHARS)}… (${json.length} characters)`;
}

/** A message cut to QUOTE_MAX_CHARS characters. */
export function cut(text: string): string {
  return text.length <= QUOTE_MAX_CHARS ? text : `${text.slice(0, QUOTE_MAX_CHARS)}…`;
}
