import { TRACE_FILE_MAX_BYTES } from '../domain/limits.js';
import type { EnvEntry } from '../domain/ports.js';
import type { SessionEvent } from '../domain/session.js';
import { TRACE_FORMAT, type TraceHeader, type TraceSessionChange, type TraceStep } from '../domain/trace.js';
import { StepLines } from '../domain/traceLines.js';
import { scrub, ScrubMemo, templateSet, type ScrubContext, type Secret } from '../domain/traceText.js';
import type { IntakeEvent } from './inspection.js';
import type { CommandEvent } from '../domain/ticket.js';
import { argumentFiles, documentFile, execRecord, execStep, openedFile, traceSessionChange, type ExecRecord, type OutcomeEvent, type UsedFile } from './traceSteps.js';
import { TraceWriter } from './traceWriter.js';

/** One trace as GET /traces lists it (behaviour.md §14.1). */
export interface TraceInfo {
  trace_id: string;
  agent_id: string | null;
  topic: string | null;
  note: string | null;
  started_at: string;
  stopped_at: string | null;
  steps: number;
  bytes: number;
}

/** What a recording needs of the daemon. */
export interface RecordingDeps {
  /** The agent's home, for `~` (undefined: unknown agent). */
  home(agentId: string): string | undefined;
  /** The document a topic's session has open now (its URI), if any. */
  openDocument(agentId: string, topic: string): string | undefined;
  /** The working folder of the live shell of a `bash:` topic, if it has one. */
  shellCwd(agentId: string, topic: string): string | undefined;
  /** The persistent variables a command of this agent and topic can read (values to keep out). */
  env(agentId: string, topic: string): EnvEntry[];
  port(): number;
  version: string;
  now(): number;
  warn(message: string): void;
  /** The daemon's budget of file-step bytes waiting to be written (shared by every recording). */
  fileBytes: FileStepBudget;
}

/** Bytes of file steps read and not yet written, across recordings (TRACE_PENDING_FILE_BYTES). */
export class FileStepBudget {
  private used = 0;
  constructor(readonly limit: number) {}

  /** Reserve `n` bytes; false (nothing reserved) when that would pass the limit. */
  take(n: number): boolean {
    if (this.used + n > this.limit) return false;
    this.used += n;
    return true;
  }

  /** Give back what a written or dropped file step held. */
  release(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
}

/** A step waiting for the next flush: built from its event then (scrubbing is done in batches). */
type Pending =
  | { kind: 'agent'; agentId: string; t: number }
  | { kind: 'file'; agentId: string; t: number; path: string; content: string; bytes: number }
  /** The topic's document, open before the trace saw the topic: reopened on replay (a script step). */
  | { kind: 'open'; agentId: string; topic: string; t: number; path: string }
  /** The working folder of a `bash:` topic's shell before the trace saw the topic: restored on replay. */
  | { kind: 'cd'; agentId: string; topic: string; t: number; path: string }
  | { kind: 'exec'; rec: ExecRecord; cmd: string }
  | { kind: 'webhook'; ev: IntakeEvent };

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Session changes a topic keeps for its next finished command. A command's own changes reach its
 * topic just before its answer (a handful); more only pile up when other commands change a quiet
 * topic's session, and the oldest of those are dropped.
 */
const CHANGES_PER_TOPIC = 64;

/** The shell word that changes to `cwd`: `~/…` below the home (a replay's home differs), else the path; quoted. */
function cdTarget(cwd: string, home: string): string {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return cwd.startsWith(`${home}/`) ? `~/${quote(cwd.slice(home.length + 1))}` : quote(cwd);
}

/**
 * One recording trace (behaviour.md §14.1, §14.2): filters the command and intake events it is
 * given, adds the `agent` and `file` steps a fresh machine needs, keeps secrets out, and appends the
 * steps as they finish through a buffered writer (flushed at most every 100 ms, and on stop).
 */
export class TraceRecording {
  private readonly writer: TraceWriter;
  private readonly pending: Pending[] = [];
  private readonly agents = new Set<string>();
  private readonly files = new Set<string>();
  /** Topics (agent, topic) this trace has seen a command start in. */
  private readonly topics = new Set<string>();
  /** Session changes a topic applied, waiting for the command that finishes next there (key: agent, topic). */
  private readonly changes = new Map<string, TraceSessionChange[]>();
  /** File steps read when a command started, waiting for its outcome (key: agent, topic, ticket). */
  private readonly beforeRun = new Map<string, Pending[]>();
  /** Every secret value seen while recording (value → name): values only ever join. */
  private readonly secrets = new Map<string, string>();
  private seq = 0;
  /** The last answer's scrubbed content and its JSON, kept for the next step that repeats it. */
  private readonly contentScrub = new ScrubMemo();
  private lastContent: string | undefined;
  private readonly lines = new StepLines();
  /** Whether the file-step budget already left a file out (warned once). */
  private budgetWarned = false;
  private stoppedAt: number | null = null;

  constructor(
    readonly id: string,
    readonly filter: { agentId: string | null; topic: string | null; note: string | null; startedAt: number },
    private readonly deps: RecordingDeps,
    file: { path: string; truncate: boolean },
  ) {
    this.writer = new TraceWriter(file.path, { truncate: file.truncate, onError: (m) => this.failed(m), beforeFlush: () => this.drain() });
    const header: TraceHeader = {
      loom_trace: TRACE_FORMAT, created_at: iso(filter.startedAt), loom_version: deps.version, protocol: '0.1', note: filter.note,
      trace_id: id, agent_id: filter.agentId, topic: filter.topic,
    };
    this.writer.append(JSON.stringify(header));
    void this.writer.flush();
  }

  get active(): boolean {
    return this.stoppedAt === null;
  }

  get path(): string {
    return this.writer.path;
  }

  private failed(message: string): void {
    this.deps.warn(`trace ${this.id} stopped: cannot write ${this.writer.path}: ${message}`);
    this.stoppedAt ??= this.deps.now();
  }

  private wants(agentId: string, topic: string | null): boolean {
    return this.active && (this.filter.agentId === null || this.filter.agentId === agentId) && (topic === null || this.filter.topic === null || this.filter.topic === topic);
  }

  private agent(agentId: string, t: number): void {
    if (this.agents.has(agentId)) return;
    this.agents.add(agentId);
    this.pending.push({ kind: 'agent', agentId, t });
  }

  private recorded(ev: CommandEvent): boolean {
    return this.wants(ev.agentId, ev.topic) && ev.ticket.queuedAt >= this.filter.startedAt;
  }

  /** Files not yet in this trace, read now (before a later command changes them). */
  private fileSteps(agentId: string, files: UsedFile[], t: number): Pending[] {
    const out: Pending[] = [];
    for (const f of files) {
      const key = `${agentId}\0${f.abs}`;
      if (this.files.has(key)) continue;
      const content = f.read();
      if (content === undefined) continue;
      const bytes = Buffer.byteLength(content);
      if (!this.deps.fileBytes.take(bytes)) {
        // Not added to `files`: a later command may still bring it once the buffer has drained. Said
        // once per recording: a command naming hundreds of files must not flood the log as well.
        if (!this.budgetWarned) this.deps.warn(`trace ${this.id}: ${f.path} left out: more than ${this.deps.fileBytes.limit} bytes of files wait to be written`);
        this.budgetWarned = true;
        continue;
      }
      this.files.add(key);
      out.push({ kind: 'file', agentId, t, path: f.path, content, bytes });
    }
    return out;
  }

  /**
   * The first command the trace sees in a topic whose session already has a local document open
   * (opened before the trace started): the document as a `file` step and a `/open` of it without
   * `expect`, so a replay's topic shows the same document in its answers.
   */
  private openedBefore(ev: CommandEvent, home: string): Pending[] {
    const key = `${ev.agentId}\0${ev.topic}`;
    if (this.topics.has(key)) return [];
    this.topics.add(key);
    const cwd = this.deps.shellCwd(ev.agentId, ev.topic);
    // A shell's folder, like an open document, is where the recorded commands ran.
    if (cwd !== undefined && cwd !== home) return [{ kind: 'cd', agentId: ev.agentId, topic: ev.topic, t: ev.ticket.queuedAt, path: cdTarget(cwd, home) }];
    const uri = this.deps.openDocument(ev.agentId, ev.topic);
    const [doc] = uri ? openedFile(uri, home) : [];
    // A path `/open` would read otherwise (`#` starts an anchor; spaces and quotes split words) is left out.
    if (!doc || !/^[^\s#"'\\]+$/.test(doc.path)) return [];
    const t = ev.ticket.queuedAt;
    const files = this.fileSteps(ev.agentId, [doc], t);
    // Only a document the trace holds (now or from an earlier step): a replay could not open another.
    if (files.length === 0 && !this.files.has(`${ev.agentId}\0${doc.abs}`)) return [];
    return [...files, { kind: 'open', agentId: ev.agentId, topic: ev.topic, t, path: doc.path }];
  }

  /** A command starts: the files it names are read as they are before it runs (a replay starts from them). */
  onStarted(ev: CommandEvent): void {
    if (!this.recorded(ev)) return;
    const home = this.deps.home(ev.agentId);
    if (!home) return;
    const opened = this.openedBefore(ev, home);
    const named = argumentFiles(ev.ticket.cmd, home);
    // Most commands name no file and open nothing new: no arrays and no key for them.
    if (opened.length === 0 && named.length === 0) return;
    const steps = [...opened, ...this.fileSteps(ev.agentId, named, ev.ticket.queuedAt)];
    if (steps.length > 0) this.beforeRun.set(`${ev.agentId}\0${ev.topic}\0${ev.ticket.id}`, steps);
  }

  /**
   * A session change of a topic (behaviour.md §13.7): a command's changes reach its topic right
   * before its answer, so they are kept for the topic's next finished command.
   */
  onSession(ev: SessionEvent): void {
    if (!this.wants(ev.agentId, ev.topic)) return;
    const change = traceSessionChange(ev);
    if (!change) return;
    const key = `${ev.agentId}\0${ev.topic}`;
    const list = this.changes.get(key);
    if (!list) this.changes.set(key, [change]);
    else if (list.push(change) > CHANGES_PER_TOPIC) list.shift();
  }

  /** A command's outcome (finished or refused): recorded when it arrived after the trace started. */
  onCommand(ev: OutcomeEvent): void {
    // Most topics change nothing in their sessions: the map is empty and no key is made.
    let session: TraceSessionChange[] | undefined;
    if (this.changes.size > 0 && ev.type === 'command.finished') {
      const key = `${ev.agentId}\0${ev.topic}`;
      session = this.changes.get(key);
      if (session) this.changes.delete(key);
    }
    if (!this.recorded(ev)) return;
    this.agent(ev.agentId, ev.ticket.queuedAt);
    // Files read when it started (rare: the map is empty for commands that name none).
    if (this.beforeRun.size > 0) {
      const key = `${ev.agentId}\0${ev.topic}\0${ev.ticket.id}`;
      const read = this.beforeRun.get(key);
      if (read) {
        this.beforeRun.delete(key);
        for (const p of read) this.pending.push(p);
      }
    }
    const home = this.deps.home(ev.agentId);
    const docs = home ? documentFile(ev, home) : [];
    if (docs.length > 0) for (const p of this.fileSteps(ev.agentId, docs, ev.ticket.queuedAt)) this.pending.push(p);
    const templ = templateSet(ev.ticket.cmd);
    for (const [name, value] of templ.secrets) this.secrets.set(value, name);
    const rec = execRecord(ev);
    if (session) rec.session = session;
    // An answer equal to the last one is kept as that same string, so the new copy dies young.
    const content = rec.expect.content;
    if (content !== undefined) {
      if (content === this.lastContent) rec.expect.content = this.lastContent;
      else this.lastContent = content;
    }
    this.pending.push({ kind: 'exec', rec, cmd: templ.cmd });
    this.writer.schedule();
  }

  /** A webhook post stored in the agent's inbox. */
  onIntake(ev: IntakeEvent): void {
    if (!this.wants(ev.agentId, null) || ev.at < this.filter.startedAt) return;
    this.agent(ev.agentId, ev.at);
    this.pending.push({ kind: 'webhook', ev });
    this.writer.schedule();
  }

  /** Turn the pending steps into lines (right before a flush): one env read per agent and topic. */
  private drain(): void {
    if (this.pending.length === 0) return;
    const items = this.pending.splice(0);
    // Topics read per agent (no key strings and no pair arrays per step: this runs for every step).
    const seen = new Map<string, Set<string>>();
    for (const p of items) {
      const agentId = p.kind === 'exec' ? p.rec.agentId : p.kind === 'webhook' ? p.ev.agentId : p.agentId;
      const topic = p.kind === 'exec' ? p.rec.topic : p.kind === 'open' ? p.topic : 'main';
      let topics = seen.get(agentId);
      if (!topics) seen.set(agentId, (topics = new Set()));
      if (topics.has(topic)) continue;
      topics.add(topic);
      for (const e of this.deps.env(agentId, topic)) this.secrets.set(e.value, e.name);
    }
    const secrets: Secret[] = [...this.secrets].map(([value, name]) => [name, value]);
    for (const p of items) {
      const line = this.lines.parts(this.step(p, secrets));
      if (typeof line === 'string') this.writer.append(line);
      else this.writer.appendParts(line);
      if (p.kind === 'file') this.deps.fileBytes.release(p.bytes);
    }
    if (this.writer.bytes > TRACE_FILE_MAX_BYTES && this.active) {
      this.deps.warn(`trace ${this.id} stopped: its file passed ${TRACE_FILE_MAX_BYTES} bytes`);
      this.stoppedAt = this.deps.now();
    }
  }

  private step(p: Pending, secrets: Secret[]): TraceStep {
    const seq = ++this.seq;
    const t = (at: number) => Math.max(0, at - this.filter.startedAt);
    const port = this.deps.port();
    switch (p.kind) {
      case 'agent':
        return { seq, t_ms: t(p.t), kind: 'agent', agent_id: p.agentId };
      case 'open':
        return { seq, t_ms: t(p.t), kind: 'exec', via: 'exec', agent_id: p.agentId, topic: p.topic, cmd: `/open ${p.path}` };
      case 'cd':
        return { seq, t_ms: t(p.t), kind: 'exec', via: 'exec', agent_id: p.agentId, topic: p.topic, cmd: `/exec cd ${p.path}` };
      case 'file':
        // Payloads are kept as they are except for secrets and the port (a home path inside stays).
        return { seq, t_ms: t(p.t), kind: 'file', agent_id: p.agentId, path: p.path, content: scrub(p.content, { secrets, port }) };
      case 'webhook':
        return { seq, t_ms: t(p.ev.at), kind: 'webhook', agent_id: p.ev.agentId, text: scrub(p.ev.text, { secrets, port }), expect: { status: 202 } };
      default: {
        const ctx: ScrubContext = { home: this.deps.home(p.rec.agentId), port, secrets };
        return execStep(p.rec, { seq, t_ms: t(p.rec.ticket.queuedAt), cmd: p.cmd }, ctx, this.contentScrub);
      }
    }
  }

  /** Write what is pending (GET /traces/<id> reads the file after this). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Stop recording: flush, close the file. Idempotent. */
  async stop(): Promise<void> {
    this.stoppedAt ??= this.deps.now();
    await this.writer.close();
    // Files read for commands that never finished while recording: their bytes go back to the budget.
    for (const steps of this.beforeRun.values()) for (const p of steps) if (p.kind === 'file') this.deps.fileBytes.release(p.bytes);
    this.beforeRun.clear();
    this.changes.clear();
  }

  info(): TraceInfo {
    return {
      trace_id: this.id, agent_id: this.filter.agentId, topic: this.filter.topic, note: this.filter.note,
      started_at: iso(this.filter.startedAt), stopped_at: this.stoppedAt === null ? null : iso(this.stoppedAt),
      steps: this.seq + this.pending.length, bytes: this.writer.bytes,
    };
  }
}
