import { expect } from '@jest/globals';
import type { ExecHead } from '../../src/client/index.js';
import type { Clock } from '../../src/domain/ports.js';
import { startApp, type TestApp } from '../helpers/app.js';

/** What a command test looks at: the head fields, the body after the `re:` line, the whole content. */
export interface Outcome {
  ok: boolean;
  code: string | null;
  body: string;
  content: string;
  head: ExecHead;
}

/** An in-process daemon with one registered agent and a shorthand to run commands as that agent. */
export interface CommandBench {
  t: TestApp;
  agentId: string;
  home: string;
  run(topic: string, cmd: string): Promise<Outcome>;
  /** Register another agent on the same daemon and get its own runner. */
  agent(agentId: string): Promise<{ home: string; run(topic: string, cmd: string): Promise<Outcome> }>;
  close(): Promise<void>;
}

/** Register `agentId` and return a runner for its commands. */
async function agentRunner(t: TestApp, agentId: string): Promise<{ home: string; run(topic: string, cmd: string): Promise<Outcome> }> {
  const client = t.client(agentId);
  const reg = await client.registerAgent({ agent_id: agentId });
  expect(reg.status).toBe(200);
  return {
    home: String(reg.body.home),
    async run(topic, cmd) {
      const out = await client.exec(topic, cmd);
      expect(out.status).toBe(200);
      expect(out.done).toBe(true);
      const head = out.head as ExecHead;
      return { ok: head.ok, code: head.code, body: out.body ?? '', content: out.content ?? '', head };
    },
  };
}

/** Start an app (port 0, memory agent registry) and register `agentId`. */
export async function bench(opts: { agentId?: string; clock?: Clock; env?: Record<string, string> } = {}): Promise<CommandBench> {
  const agentId = opts.agentId ?? 'leo';
  const t = await startApp({ clock: opts.clock, env: opts.env });
  const first = await agentRunner(t, agentId);
  return { t, agentId, home: first.home, run: first.run, agent: (id) => agentRunner(t, id), close: () => t.close() };
}

/** The content of a content command (behaviour.md §1.5): system line, `---`, the lines. */
export const page = (system: string, lines: string[]): string => [system, '---', ...lines].join('\n');
