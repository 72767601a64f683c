import type { SseEvent } from '../client/index.js';

/** The notification method of a host channel (behaviour.md §10.4). */
export const CHANNEL_METHOD = 'notifications/claude/channel';

/** The capability `loom mcp --channel` advertises under `capabilities.experimental`. */
export const CHANNEL_CAPABILITY = 'claude/channel';

/** An inbox event as GET /events/stream sends it (spec §6). */
export interface StreamedEvent {
  id: string;
  agentId: string;
  receivedAt: string;
  source: string;
  text: string;
  status: string;
}

/** The params of one channel notification (behaviour.md §10.4). */
export interface ChannelParams {
  [key: string]: unknown;
  content: string;
  meta: { source: 'loom'; agent_id: string; event_id: string; received_at: string };
}

/** Map a streamed inbox event to notification params; null when the data is not an event object. */
export function channelParams(data: string, agentId: string): ChannelParams | null {
  let e: Partial<StreamedEvent>;
  try {
    e = JSON.parse(data) as Partial<StreamedEvent>;
  } catch {
    return null;
  }
  if (typeof e !== 'object' || e === null || typeof e.text !== 'string' || typeof e.id !== 'string') return null;
  return {
    content: e.text,
    meta: { source: 'loom', agent_id: typeof e.agentId === 'string' ? e.agentId : agentId, event_id: e.id, received_at: String(e.receivedAt ?? '') },
  };
}

/** What the forwarder needs; the delays are injectable so tests need not wait seconds. */
export interface ChannelOptions {
  agentId: string;
  /** Opens GET /events/stream (LoomClient.eventStream). */
  open: (signal: AbortSignal) => AsyncIterable<SseEvent>;
  /** Sends one notification to the host. */
  notify: (params: ChannelParams) => Promise<void>;
  signal: AbortSignal;
  /** Reconnect backoff: starts at minDelayMs, doubles up to maxDelayMs (behaviour.md §10.4: 1–30 s). */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** Told about stream failures (stderr in `loom mcp`). */
  onError?: (err: unknown) => void;
  /** Waits between attempts (injected in tests; default: a timer that ends early on abort). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

function timerSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Forward every `event` of the agent's event stream as a channel notification until `signal`
 * aborts, reconnecting with backoff whenever the stream ends or fails. The backoff resets once a
 * stream has opened (`ready`). Events are never acknowledged (spec §6 Emission).
 */
export async function forwardEvents(o: ChannelOptions): Promise<void> {
  const min = o.minDelayMs ?? 1000;
  const max = o.maxDelayMs ?? 30000;
  const sleep = o.sleep ?? timerSleep;
  let delay = min;
  while (!o.signal.aborted) {
    try {
      for await (const e of o.open(o.signal)) {
        if (e.event === 'ready') delay = min;
        if (e.event !== 'event') continue;
        const params = channelParams(e.data, o.agentId);
        if (params) await o.notify(params);
      }
    } catch (err) {
      if (o.signal.aborted) return;
      o.onError?.(err);
    }
    await sleep(delay, o.signal);
    delay = Math.min(delay * 2, max);
  }
}
