import { runCli, type RunningDaemon } from '../helpers/daemon.js';

/** The result of one `loom` run. */
export type CliResult = Awaited<ReturnType<typeof runCli>>;

/**
 * Run the built `loom` CLI against a daemon: SVC_PORT and SVC_DATA_DIR point at it and an inherited
 * LOOM_AGENT_ID is cleared, so only what a test passes decides the agent.
 */
export function loom(d: { port: number; dataDir: string } | RunningDaemon, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir, LOOM_AGENT_ID: '', ...env });
}
