import { SEGMENT_RE } from './ids.js';

/** spec §2 Topic: topic_type values. */
export type TopicType = 'tab' | 'app' | 'bash' | 'hub';
/** Legacy user wire topic types (behaviour.md §11). */
export type UserTopicType = 'file' | 'app' | 'web' | 'bash';

/** spec §2 Topic: the reserved hub names. */
export const HUB_NAMES = ['app', 'bash', 'tool', 'event', 'system', 'agent'] as const;
export type HubName = (typeof HUB_NAMES)[number];

/** A parsed topic (behaviour.md §1.3). */
export interface TopicRef {
  /** Canonical form: the trimmed string. */
  readonly topic: string;
  readonly type: TopicType | UserTopicType;
  /** `app:<name>` package name, `bash:<name>` shell name, hub name or tab name. */
  readonly name: string;
  /** `app:<name>:<config>` config part. */
  readonly config?: string;
}

/**
 * Parse a topic per behaviour.md §1.3 (agent wire). Returns null when it does not parse;
 * callers answer `Invalid topic: <raw>` with the raw value.
 */
export function parseTopic(raw: unknown): TopicRef | null {
  if (typeof raw !== 'string') return null;
  const t = raw.trim();
  const parts = t.split(':');
  if (!parts.every((p) => SEGMENT_RE.test(p))) return null;
  if (parts.length === 1) {
    const type: TopicType = (HUB_NAMES as readonly string[]).includes(t) ? 'hub' : 'tab';
    return { topic: t, type, name: t };
  }
  if (parts[0] === 'app' && parts.length <= 3) {
    return { topic: t, type: 'app', name: parts[1], ...(parts[2] !== undefined ? { config: parts[2] } : {}) };
  }
  if (parts[0] === 'bash' && parts.length === 2) return { topic: t, type: 'bash', name: parts[1] };
  return null;
}

/** Parse a topic of the legacy user wire (behaviour.md §11): `<type>:<name>[:<config>]`. */
export function parseUserTopic(raw: unknown): TopicRef | null {
  if (typeof raw !== 'string') return null;
  const t = raw.trim();
  const parts = t.split(':');
  if (parts.length < 2 || !parts.every((p) => SEGMENT_RE.test(p))) return null;
  const [type, name, config] = parts;
  if (parts.length === 3 && type !== 'app') return null;
  if (parts.length > 3) return null;
  if (type !== 'file' && type !== 'app' && type !== 'web' && type !== 'bash') return null;
  return { topic: t, type, name, ...(config !== undefined ? { config } : {}) };
}

/** The env-store scope a topic writes `/set $NAME` to (behaviour.md §6.3). */
export function topicScope(ref: TopicRef): { app?: string; config?: string } {
  if (ref.type !== 'app') return {};
  return ref.config ? { app: ref.name, config: ref.config } : { app: ref.name };
}
