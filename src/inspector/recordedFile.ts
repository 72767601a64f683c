import { constants, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { LoomError } from '../domain/errors.js';
import { INSPECTOR_FILE_MAX_BYTES } from '../domain/limits.js';
import { BUNDLE_FORMAT, checkBundle } from './bundle.js';
import { stepsFromTrace, type StepsDocument } from './traceStepper.js';
import { CORE_MACHINES, machineCatalogue } from '../services/machineCatalogue.js';

/**
 * What `loom inspect <file>` serves (behaviour.md §13.8): a recorded picture of a daemon, read once
 * from a file. The offline server answers the page's requests from `json` by exact path, with the
 * same shapes a live daemon sends, so the page needs no second way of reading.
 */
export interface RecordedSource {
  /** What the file holds. */
  kind: 'bundle' | 'trace';
  /** When it was recorded (ISO time): the page's header says `recorded <time> — not live`. */
  recordedAt: string;
  /** The Loom version that wrote it. */
  loomVersion: string;
  /** The page's path and query, as printed (`/inspect`). */
  page: string;
  /** JSON answers by exact path: `/inspect/state`, `/inspect/machines`, and whatever else the page reads. */
  json: ReadonlyMap<string, unknown>;
}

/** What a file that is not a regular file is, in words (fstat of what was opened). */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** A refusal of the file, one line naming it. */
const refused = (file: string, what: string) => new LoomError(400, `${file}: ${what}`);

/**
 * The text of `file`, read safely: opened non-blocking (a FIFO with no writer never hangs the
 * open), checked with fstat on what was opened (never a name looked up twice), refused when it is
 * not a regular file, larger than {@link INSPECTOR_FILE_MAX_BYTES} or not UTF-8.
 */
export async function readRecordedFile(file: string): Promise<string> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw refused(file, code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : `cannot open (${code ?? 'error'})`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw refused(file, `is ${kindOf(st)}, not a file`);
    if (st.size > INSPECTOR_FILE_MAX_BYTES) throw refused(file, `is ${st.size} bytes, more than the ${INSPECTOR_FILE_MAX_BYTES} bytes loom inspect opens`);
    // Read at most one byte past the limit: a file that grows while read is refused, not taken whole.
    const buf = Buffer.alloc(Math.min(st.size, INSPECTOR_FILE_MAX_BYTES) + 1);
    let got = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
      if (got === buf.length) throw refused(file, `grew past ${st.size} bytes while it was read`);
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, got));
    } catch {
      throw refused(file, 'is not UTF-8 text');
    }
  } finally {
    await handle.close();
  }
}

/** Whether `text` starts with a trace header line (`{"loom_trace": …}`, behaviour.md §14). */
function isTrace(text: string): boolean {
  const nl = text.indexOf('\n');
  const first = (nl < 0 ? text : text.slice(0, nl)).trim();
  if (!first.startsWith('{') || !first.includes('"loom_trace"')) return false;
  try {
    const head = JSON.parse(first) as unknown;
    return typeof head === 'object' && head !== null && 'loom_trace' in head;
  } catch {
    return false;
  }
}

/** The Loom version a trace's header names (`unknown` when it names none: a hand-written script). */
function traceVersion(text: string): string {
  const nl = text.indexOf('\n');
  try {
    const head = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as { loom_version?: unknown };
    return typeof head.loom_version === 'string' ? head.loom_version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The id a trace file is served under (`/inspect?trace=file`): a file has no daemon-given trace id. */
export const FILE_TRACE_ID = 'file';

/**
 * The source of a trace file (behaviour.md §13.8): its steps, made by the trace stepper (pure
 * transitions of the topic machine, nothing run), served where the page's step mode reads them,
 * with the machine catalogue to draw a topic's state.
 */
export function traceSource(text: string, file: string): RecordedSource {
  let steps: StepsDocument;
  try {
    steps = stepsFromTrace(text);
  } catch (err) {
    throw refused(file, err instanceof LoomError ? err.message : String(err));
  }
  return {
    kind: 'trace', recordedAt: steps.recorded_at ?? new Date(0).toISOString(), loomVersion: traceVersion(text), page: `/inspect?trace=${FILE_TRACE_ID}`,
    json: new Map<string, unknown>([[`/inspect/trace/${FILE_TRACE_ID}`, steps], ['/inspect/machines', machineCatalogue(CORE_MACHINES)]]),
  };
}

/** The source of a bundle's text: its snapshot, machines, and the bundle itself for /inspect/export. */
export function bundleSource(text: string, file: string): RecordedSource {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The parser's message quotes the text it met, which may span lines: the one line says what it is.
    throw refused(file, `not a ${BUNDLE_FORMAT} (malformed JSON)`);
  }
  let bundle;
  try {
    bundle = checkBundle(value);
  } catch (err) {
    throw refused(file, (err as LoomError).message);
  }
  return {
    kind: 'bundle', recordedAt: bundle.exported_at, loomVersion: bundle.loom_version, page: '/inspect',
    json: new Map<string, unknown>([['/inspect/state', bundle.state], ['/inspect/machines', bundle.machines], ['/inspect/export', bundle]]),
  };
}

/** What `loom inspect <file>` serves from `file`: a bundle, or a trace (see {@link traceSource}). */
export async function recordedSource(file: string): Promise<RecordedSource> {
  const text = await readRecordedFile(file);
  return isTrace(text) ? traceSource(text, file) : bundleSource(text, file);
}
