/**
 * The state inspector's snapshot as a client reads it (GET /inspect/state, behaviour.md §13.2).
 * Only the fields the CLI uses are typed; the daemon sends more.
 */
export interface SnapshotTicket {
  ticket: string;
  cmd: string;
  via: string;
  request_id: string | null;
  started_at?: string;
  elapsed_ms?: number;
  queued_at?: string;
  waited_ms?: number;
  expires_in_ms?: number;
  /** A waiting command's place in its queue, 1 next (behaviour.md §13.7). */
  position?: number;
}

export interface SnapshotTopic {
  topic: string;
  topic_type: string;
  state: unknown;
  /** Older daemons leave the limits out (behaviour.md §13.7). */
  queue_limit?: number;
  wait_limit_ms?: number;
  running: SnapshotTicket | null;
  waiting: SnapshotTicket[];
  shell: { state?: unknown; pid?: number; cwd?: string } | null;
  recent: Array<{ ticket: string; cmd: string; ok: boolean; code: string | null; duration_ms: number; at: string; queue_limit?: number; wait_limit_ms?: number }>;
}

export interface SnapshotAgent {
  agent_id: string;
  home: string | null;
  webhook: boolean;
  events?: { pending: number; acked: number; streams: number };
  capabilities?: Array<{ token_id: string; state: string }>;
  installs?: Array<{ install_id: string; name?: string; state: unknown; files_done?: number; files_total?: number }>;
  topics: SnapshotTopic[];
}

export interface InspectorSnapshot {
  at: string;
  version: string;
  uptime_ms: number;
  agents: SnapshotAgent[];
}
