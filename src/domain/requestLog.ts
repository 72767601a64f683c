/**
 * The daemon's request log (behaviour.md §2.13): one JSON line per request with time, method,
 * path, status, duration, agent, topic, the command word and the request id — never arguments,
 * bodies or secrets. Pure: the types, the redaction and the short line a foreground daemon prints.
 */

/** behaviour.md §2.13: `<data>/logs/requests.log`, rotated at 10 MiB, 3 files kept (`.1`, `.2`). */
export const REQUEST_LOG_DIR = 'logs';
export const REQUEST_LOG_NAME = 'requests.log';
export const REQUEST_LOG_MAX_BYTES = 10 * 1024 * 1024;
export const REQUEST_LOG_FILES = 3;

/** One request as the log records it. */
export interface RequestLogEntry {
  /** When the response ended (ISO 8601 UTC with milliseconds); `duration_ms` earlier it arrived. */
  time: string;
  method: string;
  /** The path without its query string, secrets replaced (see `logPath`). */
  path: string;
  status: number;
  duration_ms: number;
  agent: string | null;
  topic: string | null;
  /** The command word of /exec and MCP calls (`/open`, `/events.read`), never its arguments. */
  command: string | null;
  request_id: string | null;
}

/** Where entries go (a file, a terminal). */
export interface RequestLogSink {
  write(entry: RequestLogEntry): void;
  /** Flush and release what the sink holds. */
  close(): Promise<void>;
}

/** What a route adds to its request's entry once it has parsed the body. */
export type RequestNote = Partial<Pick<RequestLogEntry, 'agent' | 'topic' | 'command' | 'request_id'>>;

/** Longest command word recorded; a longer "word" is not a command anyone typed by hand. */
const COMMAND_WORD_MAX = 80;

/**
 * The path to record: the query string is dropped (`?cap=` carries capability secrets) and the
 * webhook token of `/webhook/<token>` is replaced by `<token>` (it is the only credential of that URL).
 */
export function logPath(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return !path.startsWith('/webhook/') ? path : path.replace(/^\/webhook\/[^/]*/, '/webhook/<token>');
}

/** The command word of a command text: its first token up to whitespace, lower-cased, or null. */
export function commandWord(cmd: unknown): string | null {
  if (typeof cmd !== 'string') return null;
  const m = /^\s*(\/\S*)/.exec(cmd);
  if (!m) return null;
  const word = m[1].toLowerCase();
  // Up to COMMAND_WORD_MAX UTF-16 units it holds at most that many characters: kept as it is.
  return word.length <= COMMAND_WORD_MAX ? word : [...word].slice(0, COMMAND_WORD_MAX).join('');
}

/**
 * The agent named by a `/agents/<id>/…` path (`/users/<id>` on the user wire, behaviour.md §11), for
 * routes that carry it there instead of a header.
 */
export function pathAgent(path: string, resource = '/agents'): string | null {
  if (!path.startsWith(`${resource}/`)) return null;
  const m = /^([^/]+)/.exec(path.slice(resource.length + 1));
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    // Malformed percent-encoding: record the raw segment rather than nothing.
    return m[1];
  }
}

/** The short line a foreground daemon prints per request: `10:00:02 POST /exec 200 3 ms leo main /open [r1]`. */
export function shortLine(e: RequestLogEntry): string {
  const clock = e.time.slice(11, 19);
  const who = [e.agent, e.topic, e.command].filter((x): x is string => x !== null);
  const id = e.request_id !== null ? ` [${e.request_id}]` : '';
  return `${clock} ${e.method} ${e.path} ${e.status} ${e.duration_ms} ms${who.length ? ' ' + who.join(' ') : ''}${id}`;
}
