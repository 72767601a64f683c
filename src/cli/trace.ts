import { writeFileSync } from 'node:fs';
import type { TraceListing } from '../client/index.js';
import { columns } from '../domain/text.js';
import { client, examples, globals, guard, httpFailure, print, type CliParts, type GlobalOpts } from './common.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

interface StartOpts {
  agent?: string;
  topic?: string;
  note?: string;
  quiet?: boolean;
}

async function start(opts: GlobalOpts, o: StartOpts): Promise<void> {
  // Only an explicit agent narrows the trace (here or before the subcommand); none: every agent.
  const agent = o.agent ?? opts.agent;
  const r = await client(opts, false).startTrace({ ...(agent ? { agent_id: agent } : {}), ...(o.topic ? { topic: o.topic } : {}), ...(o.note ? { note: o.note } : {}) });
  if (r.status !== 201) throw httpFailure(r.status, r.body);
  if (o.quiet) process.stdout.write(`${r.body.trace_id}\n`);
  else print(opts, r.body, `Recording ${r.body.trace_id} (${r.body.agent_id ?? 'all agents'}${r.body.topic ? ` / ${r.body.topic}` : ''})\nstop with: loom trace stop ${r.body.trace_id}`);
}

async function stop(opts: GlobalOpts, id: string, purge: boolean): Promise<void> {
  const r = await client(opts, false).stopTrace(id, purge);
  if (r.status !== 200) throw httpFailure(r.status, r.body);
  print(opts, r.body, `Stopped ${id} (${plural(r.body.steps, 'step')})${purge ? '; file deleted' : `\nsave it with: loom trace get ${id} -o ${id}.jsonl`}`);
}

function row(t: TraceListing): string[] {
  return [t.trace_id, `${t.agent_id ?? 'all agents'}${t.topic ? ` / ${t.topic}` : ''}`, plural(t.steps, 'step'), `${t.bytes} bytes`, t.stopped_at ? `stopped ${t.stopped_at}` : 'recording', t.note ? `"${t.note}"` : ''];
}

async function list(opts: GlobalOpts): Promise<void> {
  const r = await client(opts, false).listTraces();
  if (r.status !== 200) throw httpFailure(r.status, r.body);
  const n = r.body.traces.length;
  print(opts, r.body, n === 0 ? 'No traces. Start one with: loom trace start' : [`Traces (${n})`, ...columns(r.body.traces.map(row))].join('\n'));
}

async function get(opts: GlobalOpts, id: string, output?: string): Promise<void> {
  const r = await client(opts, false).getTrace(id);
  if (r.status !== 200) {
    let body: unknown = { error: r.text };
    try { body = JSON.parse(r.text); } catch { /* not JSON: the text is the error */ }
    throw httpFailure(r.status, body);
  }
  if (!output) {
    process.stdout.write(r.text);
    return;
  }
  writeFileSync(output, r.text);
  process.stderr.write(`wrote ${output} (${plural(r.text.split('\n').filter(Boolean).length - 1, 'step')})\n`);
}

/**
 * `loom trace start|stop|list|get` (behaviour.md §14.1): record what agents do into trace files that
 * `loom replay` runs again.
 */
export function traceCli({ program }: CliParts): void {
  const g = () => globals(program);
  const trace = examples(program.command('trace').description('Record what agents do: start, stop, list, get (replay with loom replay <file>)'), [
    'id=$(loom trace start --agent leo -q)', 'loom trace stop trc_01J2Z9X8Q4M7K3T5V6W8Y0A1B2',
  ]);
  examples(trace.command('start')
    .description('Start recording every command, of one agent (and topic) or of all')
    .option('--agent <id>', 'only this agent (default: all agents)')
    .option('--topic <topic>', 'only this topic')
    .option('--note <text>', 'a note kept in the trace header')
    .option('-q, --quiet', 'print only the trace id'), [
    'loom trace start --agent leo --note "weather app before the upgrade"', 'loom trace start --agent leo --topic main -q',
  ]).action((o: StartOpts) => guard(g(), () => start(g(), o)));
  examples(trace.command('stop <id>')
    .description('Stop recording (the file stays unless --purge)')
    .option('--purge', 'also delete the trace file'), ['loom trace stop trc_01J2Z9X8Q4M7K3T5V6W8Y0A1B2'])
    .action((id: string, o: { purge?: boolean }) => guard(g(), () => stop(g(), id, o.purge === true)));
  examples(trace.command('list').description('List traces, recording and stopped'), ['loom trace list'])
    .action(() => guard(g(), () => list(g())));
  examples(trace.command('get <id>')
    .description('Print a trace file (NDJSON), or write it with -o')
    .option('-o, --output <file>', 'write it to this file (relative to the current folder)'), ['loom trace get trc_01J2Z9X8Q4M7K3T5V6W8Y0A1B2 -o weather.jsonl'])
    .action((id: string, o: { output?: string }) => guard(g(), () => get(g(), id, o.output)));
}
