/**
 * The one error type of Loom (architecture.md "one error type, one renderer").
 * HTTP-level failures are thrown as LoomError and written by the single error
 * middleware as `{error, message?, reason?}`. Expected command failures are
 * values (CommandResult), never exceptions.
 */
export class LoomError extends Error {
  /** HTTP status the renderer answers with. */
  readonly status: number;
  /** Value of the `error` field of the JSON body (spec §4 conventions). */
  readonly error: string;
  /** Optional `message` field (spec §4: "some add message"). */
  readonly detail?: string;
  /** Extra body fields, e.g. `reason` on /fs (behaviour.md §9.6). */
  readonly extra?: Record<string, unknown>;
  /** Extra response headers, e.g. `Allow` on 405. */
  readonly headers?: Record<string, string>;
  /** A body a protocol fixes instead of `{error, …}` (JSON-RPC errors on /mcp, behaviour.md §10.1). */
  readonly protocolBody?: Record<string, unknown>;

  constructor(status: number, error: string, opts: { message?: string; extra?: Record<string, unknown>; headers?: Record<string, string>; protocolBody?: Record<string, unknown> } = {}) {
    super(opts.message ? `${error}: ${opts.message}` : error);
    this.status = status;
    this.error = error;
    this.detail = opts.message;
    this.extra = opts.extra;
    this.headers = opts.headers;
    this.protocolBody = opts.protocolBody;
  }

  /** The JSON body of spec §4: `{error, message?}` plus any extra fields (or the protocol's body). */
  body(): Record<string, unknown> {
    if (this.protocolBody) return this.protocolBody;
    const out: Record<string, unknown> = { error: this.error };
    if (this.detail !== undefined) out.message = this.detail;
    return { ...out, ...(this.extra ?? {}) };
  }
}

/** Narrow an unknown thrown value to a printable message (no stack: behaviour.md §1.6 INTERNAL_ERROR). */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
