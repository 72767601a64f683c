import { writeFileSync } from 'node:fs';
import type { TraceListing } from '../client/index.js';
import type { Command } from 'commander';
import { client, guard, print, type GlobalOpts } from './common.js';

/** A refused trace call: its `error` on stderr (or as JSON), exit 1. */
function refused(opts: GlobalOpts, status: number, body: { error?: string }): number {
  if (opts.json) process.stderr.write(JSON.stringify({ error: body.error ?? `HTTP ${status}`, code: `HTTP_${status}` }, null, 2) + '\n');
  else process.stderr.write(`loom: ${body.error ?? `HTTP ${status}`}\n`);
  return 1;
}

/** One row of `loom trace list`. */
function row(t: TraceListing): string {
  const scope = `${t.agent_id ?? 'all agents'}${t.topic ? ` / ${t.topic}` : ''}`;
  const state = t.stopped_at ? `stopped ${t.stopped_at}` : 'recording';
  return `  ${t.trace_id}  ${scope}  ${t.steps} ${t.steps === 1 ? 'step' : 'steps'}  ${t.bytes} bytes  ${state}${t.note ? `  "${t.note}"` : ''}`;
}

/**
 * `loom trace start|stop|list|get` (behaviour.md §14.1): record what agents do into trace files
 * that `loom replay` runs again.
 */
export function traceCli({ program }: { program: Command }): void {
  const g = () => program.opts<GlobalOpts>();
  const trace = program.command('trace').description('Record what agents do: start, stop, list, get (replay with: loom replay <file>)');
  trace.command('start')
    .description('Start recording every command (of one agent, one topic, or all)')
    .option('--agent <id>', 'only this agent (default: all agents)')
    .option('--topic <topic>', 'only this topic')
    .option('--note <text>', 'a note stored in the trace header')
    .option('-q, --quiet', 'print only the trace id (for id=$(loom trace start -q))')
    .action((o: { agent?: string; topic?: string; note?: string; quiet?: boolean }) => guard(async () => {
      const agent = o.agent ?? g().agent;
      const r = await client(g(), false).startTrace({ ...(agent ? { agent_id: agent } : {}), ...(o.topic ? { topic: o.topic } : {}), ...(o.note ? { note: o.note } : {}) });
      if (r.status !== 201) return refused(g(), r.status, r.body);
      if (o.quiet) process.stdout.write(`${r.body.trace_id}\n`);
      else print(g(), r.body, `Recording ${r.body.trace_id} (${r.body.agent_id ?? 'all agents'}${r.body.topic ? ` / ${r.body.topic}` : ''})\nstop with: loom trace stop ${r.body.trace_id}`);
      return 0;
    }));
  trace.command('stop <id>')
    .description('Stop recording (the file stays; --purge removes it)')
    .option('--purge', 'also delete the trace file')
    .action((id: string, o: { purge?: boolean }) => guard(async () => {
      const r = await client(g(), false).stopTrace(id, o.purge === true);
      if (r.status !== 200) return refused(g(), r.status, r.body);
      print(g(), r.body, `Stopped ${id} (${r.body.steps} ${r.body.steps === 1 ? 'step' : 'steps'})${o.purge ? '; file deleted' : `\nsave it with: loom trace get ${id} -o ${id}.jsonl`}`);
      return 0;
    }));
  trace.command('list').description('List traces, recording and stopped').action(() => guard(async () => {
    const r = await client(g(), false).listTraces();
    if (r.status !== 200) return refused(g(), r.status, r.body);
    const n = r.body.traces.length;
    print(g(), r.body, n === 0 ? 'No traces. Start one with: loom trace start' : `Traces (${n})\n${r.body.traces.map(row).join('\n')}`);
    return 0;
  }));
  trace.command('get <id>')
    .description('Print a trace file (NDJSON), or write it with -o')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action((id: string, o: { output?: string }) => guard(async () => {
      const r = await client(g(), false).getTrace(id);
      if (r.status !== 200) {
        let body: { error?: string } = {};
        try { body = JSON.parse(r.text) as { error?: string }; } catch { body = { error: r.text }; }
        return refused(g(), r.status, body);
      }
      if (o.output) {
        writeFileSync(o.output, r.text);
        process.stderr.write(`wrote ${o.output} (${r.text.split('\n').filter(Boolean).length - 1} steps)\n`);
      } else process.stdout.write(r.text);
      return 0;
    }));
}
