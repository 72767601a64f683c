/**
 * The abort handles of sessions, kept with the actors rather than in a topic's context (which holds
 * data only): a command gets its session's signal; ending the session aborts what still runs in it
 * (behaviour.md §1.3: "DELETE /sessions on an executing topic kills the running command").
 */
export class SessionSignals {
  private readonly controllers = new Map<number, AbortController>();

  /** The signal of session `id`, created on first use so idle topics hold none. */
  signal(id: number): AbortSignal {
    let c = this.controllers.get(id);
    if (!c) {
      c = new AbortController();
      this.controllers.set(id, c);
    }
    return c.signal;
  }

  /** The session ended: abort its signal (if any was handed out) and forget it. */
  end(id: number): void {
    const c = this.controllers.get(id);
    if (!c) return;
    this.controllers.delete(id);
    c.abort();
  }
}
