import type { LoomSystem } from '../actors/system.js';
import { errorMessage } from '../domain/errors.js';
import { outputOutcome, refusedOutcome, type ToolOutcome, type ToolRunner } from '../domain/mcpTool.js';
import type { TopicRef } from '../domain/topic.js';

/**
 * The daemon's tool runner for one agent (spec §4.8): the /exec command path with via `mcp`, so a
 * topic that is executing (from /exec or /mcp) answers BUSY at once and is not queued
 * (behaviour.md §10.3: the BUSY test and the start are one transition of the topic machine). The
 * answer is the same output /exec streams, without its `re:` line (behaviour.md §10.2).
 */
export function systemRunner(system: LoomSystem, agentId: string): ToolRunner {
  return (ref: TopicRef, cmd: string) => new Promise<ToolOutcome>((resolve) => {
    try {
      system.submit({ agentId, ref, cmd, requestId: null, via: 'mcp' }, (ev) => {
        if (ev.type === 'command.refused') resolve(refusedOutcome(ref.topic, ev.reason));
        else if (ev.type === 'command.finished') resolve(outputOutcome(ev.output));
      });
    } catch (err) {
      // The agent was deleted between auto-registration and submit.
      resolve({ ok: false, topic: ref.topic, body: `ERROR(INTERNAL_ERROR): ${errorMessage(err)}` });
    }
  });
}
