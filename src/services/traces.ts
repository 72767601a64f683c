import { createReadStream, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { isFileRefusal } from '../domain/agentFile.js';
import { openAgentFile, readAgentFile } from '../effects/agentFile.js';
import { join, resolve } from 'node:path';
import { monotonicFactory } from 'ulid';
import { LoomError, errorMessage } from '../domain/errors.js';
import { TRACE_FILE_MAX_BYTES, TRACE_PENDING_FILE_BYTES, TRACES_ACTIVE_MAX } from '../domain/limits.js';
import type { Clock } from '../domain/ports.js';
import type { TraceHeader } from '../domain/trace.js';
import { parseTopic, topicScope } from '../domain/topic.js';
import type { EnvStore } from '../domain/ports.js';
import type { AgentDirectory } from '../actors/directory.js';
import type { Inspection } from './inspection.js';
import { FileStepBudget, TraceRecording, type TraceInfo } from './traceRecording.js';
import { STEPPER_MAX_CHARS, stepsFromTrace, type StepsDocument } from './traceStepper.js';
import { shellView } from './shells.js';

export type { TraceInfo } from './traceRecording.js';

const ulid = monotonicFactory();

/** behaviour.md §14.1: `trc_<ulid>`. */
export const TRACE_ID_RE = /^trc_[0-9A-HJKMNP-TV-Z]{26}$/;

/** What POST /traces asks for (validated by the route). */
export interface TraceRequest {
  agentId: string | null;
  topic: string | null;
  note: string | null;
}

/** A stopped trace known only from its file (recorded by an earlier run of the daemon). */
interface StoredTrace {
  path: string;
  info?: TraceInfo;
}

/** A recording stops once its file passes TRACE_FILE_MAX_BYTES; the last batch may go past it. */
const TRACE_READ_MAX_BYTES = TRACE_FILE_MAX_BYTES + TRACE_PENDING_FILE_BYTES;

const unknown = (id: string) => new LoomError(404, `Unknown trace: ${id}`);

/**
 * Traces of behaviour.md §14.1: start, list, read and stop recordings. Files are
 * `<data>/traces/<id>.jsonl` (or the `--record` file). The recorder listens to the topics' `command.*`
 * events and the inbox's intakes only while a trace is active, so a daemon that records nothing pays
 * nothing.
 */
export class TraceService {
  private readonly live = new Map<string, TraceRecording>();
  private readonly stored = new Map<string, StoredTrace>();
  private readonly fileBytes = new FileStepBudget(TRACE_PENDING_FILE_BYTES);
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly parts: { directory: AgentDirectory; inspection: Inspection; env: EnvStore }, private readonly opts: { dataDir: string; clock: Clock; port: () => number; version: string }) {
    this.scan();
  }

  private get dir(): string {
    return join(this.opts.dataDir, 'traces');
  }

  /** Traces left by earlier runs: every `<id>.jsonl` in the traces folder. */
  private scan(): void {
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      // No traces folder yet.
    }
    for (const n of names) {
      const id = n.replace(/\.jsonl$/, '');
      if (n.endsWith('.jsonl') && TRACE_ID_RE.test(id)) this.stored.set(id, { path: join(this.dir, n) });
    }
  }

  private listen(): void {
    if (this.unsubscribe) return;
    const offCommands = this.parts.inspection.observeCommands((ev) => {
      if (ev.type === 'command.started') for (const t of this.live.values()) t.onStarted(ev);
      else if (ev.type === 'command.finished' || ev.type === 'command.refused') for (const t of this.live.values()) t.onCommand(ev);
    });
    const offIntake = this.parts.inspection.observeIntake((ev) => {
      for (const t of this.live.values()) t.onIntake(ev);
    });
    // Session changes reach a recording from the topics' own events (behaviour.md §13.7), never by reading a session.
    const offSessions = this.parts.inspection.observeSessions((ev) => {
      for (const t of this.live.values()) t.onSession(ev);
    });
    this.unsubscribe = () => { offCommands(); offIntake(); offSessions(); };
  }

  private quietIfIdle(): void {
    if ([...this.live.values()].some((t) => t.active)) return;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** POST /traces (and `loom daemon --record <file>`): start recording now. */
  start(req: TraceRequest, file?: string): TraceInfo {
    if ([...this.live.values()].filter((t) => t.active).length >= TRACES_ACTIVE_MAX) {
      throw new LoomError(429, `Too many active traces (${TRACES_ACTIVE_MAX}); stop one with DELETE /traces/<id>`);
    }
    const id = `trc_${ulid()}`;
    if (!file) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const path = file ? resolve(file) : join(this.dir, `${id}.jsonl`);
    const rec = new TraceRecording(id, { ...req, startedAt: this.opts.clock.now() }, {
      home: (a) => this.parts.directory.profile(a)?.home,
      openDocument: (a, topic) => this.parts.directory.topics(a).find((s) => s.session.ref.topic === topic)?.session.doc?.uri,
      shellCwd: (a, topic) => {
        const ref = this.parts.directory.shell(a, topic);
        return ref && ref.getSnapshot().status === 'active' ? shellView(ref).cwd : undefined;
      },
      env: (a, topic) => {
        const ref = parseTopic(topic);
        return ref ? this.parts.env.effective(a, topicScope(ref)) : [];
      },
      port: this.opts.port,
      version: this.opts.version,
      now: () => this.opts.clock.now(),
      warn: (m) => process.emitWarning(m),
      fileBytes: this.fileBytes,
    }, { path, truncate: file !== undefined });
    this.live.set(id, rec);
    this.listen();
    return rec.info();
  }

  /** GET /traces: live and earlier traces, oldest first. */
  list(): TraceInfo[] {
    const out = [...this.live.values()].map((t) => t.info());
    for (const [id, s] of this.stored) {
      if (this.live.has(id)) continue;
      const info = this.storedInfo(id, s);
      if (info) out.push(info);
    }
    return out.sort((a, b) => (a.trace_id < b.trace_id ? -1 : a.trace_id > b.trace_id ? 1 : 0));
  }

  /** A stored trace's entry, read once from its file (header line, line count, size, mtime). */
  private storedInfo(id: string, s: StoredTrace): TraceInfo | undefined {
    if (s.info) return s.info;
    try {
      // Through the bounded reader: a FIFO or device standing at a trace's name is not listed, never read.
      const read = readAgentFile(s.path, TRACE_READ_MAX_BYTES);
      if (isFileRefusal(read)) throw new Error(read.refused);
      const text = read.data.toString('utf8');
      const st = statSync(s.path);
      const lines = text.split('\n').filter((l) => l.trim() !== '');
      let header: Partial<TraceHeader> = {};
      try {
        header = JSON.parse(lines[0] ?? '{}') as TraceHeader;
      } catch {
        // A damaged header: list the file with what its name and stat say.
      }
      s.info = {
        trace_id: id, agent_id: header.agent_id ?? null, topic: header.topic ?? null, note: header.note ?? null,
        started_at: header.created_at ?? st.birthtime.toISOString(), stopped_at: st.mtime.toISOString(),
        steps: Math.max(0, lines.length - 1), bytes: st.size,
      };
      return s.info;
    } catch {
      this.stored.delete(id);
      return undefined;
    }
  }

  /** GET /traces/<id>: the file's path once everything recorded so far is in it. */
  async file(id: string): Promise<string> {
    const t = this.live.get(id);
    if (t) {
      await t.flush();
      return t.path;
    }
    const s = this.stored.get(id);
    if (!s || !this.storedInfo(id, s)) throw unknown(id);
    return s.path;
  }

  /**
   * GET /traces/<id>: the trace's lines as a stream (flushed first when it still records). Opened
   * without blocking and fstat-checked (behaviour.md §16): a trace file that is no longer a regular
   * file is unknown. Sent up to the size the file had when opened.
   */
  async open(id: string): Promise<Readable> {
    const f = openAgentFile(await this.file(id));
    if ('refused' in f) throw unknown(id);
    return createReadStream('', { fd: f.fd, start: 0, end: Math.max(0, f.size - 1), autoClose: true });
  }

  /**
   * GET /inspect/trace/<id> (behaviour.md §13.8): the trace as steps for the page, rebuilt from its
   * file (flushed first while it records). Read through the bounded reader: a file that is no longer
   * a regular file is unknown; one too large to step through is a 422 that says so.
   */
  async steps(id: string): Promise<StepsDocument> {
    const read = readAgentFile(await this.file(id), STEPPER_MAX_CHARS);
    if (isFileRefusal(read)) {
      if (read.refused === 'too_large') throw new LoomError(422, `Cannot step through this trace: it is larger than ${STEPPER_MAX_CHARS} bytes`);
      throw unknown(id);
    }
    return stepsFromTrace(read.data.toString('utf8'));
  }

  /** DELETE /traces/<id>[?purge=1]: stop (idempotent); `purge` also removes the file. */
  async stop(id: string, purge: boolean): Promise<{ trace_id: string; stopped: true; steps: number }> {
    const t = this.live.get(id);
    let steps: number;
    let path: string;
    if (t) {
      await t.stop();
      this.quietIfIdle();
      steps = t.info().steps;
      path = t.path;
    } else {
      const s = this.stored.get(id);
      const info = s && this.storedInfo(id, s);
      if (!s || !info) throw unknown(id);
      steps = info.steps;
      path = s.path;
    }
    if (purge) {
      this.live.delete(id);
      this.stored.delete(id);
      try {
        rmSync(path, { force: true });
      } catch (err) {
        process.emitWarning(`could not remove trace file ${path}: ${errorMessage(err)}`);
      }
    }
    return { trace_id: id, stopped: true, steps };
  }

  /** Daemon shutdown: every recording is flushed and closed. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.live.values()].map((t) => t.stop()));
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}
