import { closeSync, constants as C, fchmodSync, fstatSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { DaemonUnreachable, LoomClient } from '../client/index.js';
import { TraceFormatError, parseTraceLines, type Trace } from '../domain/trace.js';
import { stepLine } from '../domain/traceLines.js';
import { escapeControls, terminalJson } from '../domain/text.js';
import { envRefs, mapIds, type Secret } from '../domain/traceText.js';
import { DaemonStartError, startFreshDaemon, type FreshDaemon } from './daemon.js';
import { ExecTransport } from './http.js';
import type { ReplayOptions } from './options.js';
import { stepJson, stepText, summarise, summaryLine } from './report.js';
import { runSteps, type StepResult } from './run.js';
import { NotSent, type Target } from './send.js';
import { readTraceLines, TraceFileError } from './traceFile.js';

export { replayOptions, ReplayUsageError, type RawReplayOptions, type ReplayOptions } from './options.js';

/** Where `loom replay` writes: stdout, stderr, and the environment `${env:NAME}` reads. */
export interface ReplayIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
}

/** Every text of a trace that may hold `${env:NAME}`. */
function traceTexts(trace: Trace): string[] {
  return trace.steps.flatMap(({ step: s }) => {
    if (s.kind === 'exec') return [s.cmd, s.expect?.content ?? ''];
    if (s.kind === 'file') return [s.content];
    if (s.kind === 'webhook') return [s.text];
    return [];
  });
}

function target(url: string, opts: ReplayOptions, trace: Trace, env: ReplayIo['env']): Target {
  // An empty environment variable counts as unset (as `${NAME:?}` in a shell); `--set NAME=` is an empty value.
  const lookup = (name: string) => opts.values.get(name) ?? (env[name] === '' ? undefined : env[name]);
  const names = [...new Set(traceTexts(trace).flatMap(envRefs))];
  const secrets = names.flatMap((n): Secret[] => { const v = lookup(n); return v === undefined ? [] : [[n, v]]; });
  const homes = new Map<string, Promise<string>>();
  const http = new ExecTransport(url);
  return {
    url, port: Number(new URL(url).port || 80), lookup, secrets, ids: new Map(), http,
    agentHome(agentId) {
      let home = homes.get(agentId);
      if (!home) {
        // behaviour.md §14.3: agents are registered if missing; POST /agents without a home changes nothing of an existing one.
        home = http.json('POST', '/agents', { agent_id: agentId }).then((r) => {
          if (typeof r.body.home !== 'string') throw new NotSent(`POST /agents for ${agentId} answered ${r.status}: ${String(r.body.error ?? '')}`);
          return r.body.home;
        });
        homes.set(agentId, home);
      }
      return home;
    },
  };
}

/** `--update`: the actual answers become the expectations; the file is replaced atomically, keeping its mode. */
function update(file: string, lines: readonly string[], trace: Trace, results: StepResult[], ids: ReadonlyMap<string, string>): number {
  let n = 0;
  for (const r of results) {
    if (!r.actual || (r.step.kind !== 'exec' && r.step.kind !== 'webhook')) continue;
    r.step.expect = r.actual;
    // The new expectations name today's ids; so must the commands that use them.
    if (r.step.kind === 'exec') r.step.cmd = mapIds(r.step.cmd, ids);
    n++;
  }
  const header = trace.header ? [lines.find((l) => l.trim() !== '') as string] : [];
  writeKeepingMode(file, [...header, ...trace.steps.map((p) => stepLine(p.step))].join('\n') + '\n');
  return n;
}

/**
 * Replace `file` by a temp file beside it with the same permission bits (a 0640 trace stays 0640):
 * created 0600 so it is never wider while written, then set to the original's mode before the rename.
 */
function writeKeepingMode(file: string, text: string): void {
  const fd0 = openSync(file, C.O_RDONLY | C.O_NONBLOCK | C.O_NOCTTY);
  let mode: number;
  try {
    mode = fstatSync(fd0).mode & 0o7777;
  } finally {
    closeSync(fd0);
  }
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL, 0o600);
  try {
    try {
      const data = Buffer.from(text);
      for (let off = 0; off < data.length; ) off += writeSync(fd, data, off);
      fchmodSync(fd, mode);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    unlinkSync(tmp);
    throw err;
  }
}

async function connect(opts: ReplayOptions): Promise<{ url: string; daemon?: FreshDaemon }> {
  if (!opts.against) {
    const daemon = await startFreshDaemon();
    return { url: daemon.url, daemon };
  }
  const probe = new ExecTransport(opts.against);
  try {
    await probe.json('GET', '/health');
  } finally {
    probe.close();
  }
  return { url: opts.against };
}

/**
 * `loom replay <file>` (behaviour.md §14.3): parse the trace (a damaged line: exit 2 with its
 * number), start a fresh daemon or use `--against`, run the steps, print one line per step with a
 * unified diff for each difference and the summary (or JSON objects), `--update` the expectations.
 * Exit 0 when every compared step matched, 1 when any differed, 2 for usage errors or no daemon.
 */
export async function replay(opts: ReplayOptions, io: ReplayIo): Promise<number> {
  let lines: string[];
  let trace: Trace;
  try {
    lines = readTraceLines(opts.file);
    trace = parseTraceLines(lines);
  } catch (err) {
    // The problem quotes the damaged line (V8's JSON errors too): its control characters are shown escaped.
    if (err instanceof TraceFormatError) io.err(`loom replay: ${opts.file}:${err.line}: ${escapeControls(err.problem)}`);
    else io.err(`loom replay: ${escapeControls(err instanceof TraceFileError ? err.message : `cannot read ${opts.file}: ${(err as Error).message}`)}`);
    return 2;
  }
  const manyAgents = new Set(trace.steps.flatMap(({ step }) => ('agent_id' in step ? [opts.agentMap.get(step.agent_id) ?? step.agent_id] : []))).size > 1;
  let conn: { url: string; daemon?: FreshDaemon } | undefined;
  let results: StepResult[];
  let t: Target | undefined;
  try {
    conn = await connect(opts);
    const tt = target(conn.url, opts, trace, io.env);
    t = tt;
    // Every agent first: a registration in the middle of a timed run would hold its steps back together.
    const agents = new Set(trace.steps.flatMap(({ step }) => ('agent_id' in step ? [opts.agentMap.get(step.agent_id) ?? step.agent_id] : [])));
    await Promise.all([...agents].map((a) => tt.agentHome(a).catch(() => undefined)));
    // The daemon loads its MCP server on the first /mcp request; loaded now, it does not shift the timeline.
    const mcp = trace.steps.find(({ step }) => step.kind === 'exec' && step.via === 'mcp')?.step;
    if (mcp && 'agent_id' in mcp) await new LoomClient(conn.url, opts.agentMap.get(mcp.agent_id) ?? mcp.agent_id).mcpTools();
    results = await runSteps(trace.steps, { target: tt, agentMap: opts.agentMap, speed: opts.speed }, (r) => io.out(opts.json ? terminalJson(stepJson(r)) : stepText(r, manyAgents)));
  } catch (err) {
    if (err instanceof DaemonUnreachable || err instanceof DaemonStartError) {
      io.err(`loom replay: ${err instanceof DaemonUnreachable ? `daemon not reachable (${err.message})` : err.message}`);
      return 2;
    }
    throw err;
  } finally {
    t?.http.close();
    await conn?.daemon?.stop();
  }
  const summary = summarise(results);
  const updated = opts.update ? update(opts.file, lines, trace, results, (t as Target).ids) : undefined;
  if (opts.json) io.out(JSON.stringify({ summary: { ...summary, ...(updated !== undefined ? { updated } : {}) } }));
  else {
    io.out(summaryLine(summary));
    if (updated !== undefined) io.out(`updated ${opts.file}: ${updated} ${updated === 1 ? 'expectation' : 'expectations'} written`);
  }
  const failed = results.some((r) => r.verdict === 'failed');
  if (opts.update) return failed ? 1 : 0;
  return summary.differed > 0 ? 1 : 0;
}
