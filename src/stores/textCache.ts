/**
 * A small least-recently-used cache of event texts by event id, bounded in bytes so that memory
 * does not grow with the inbox: the inbox keeps texts on disk, and listings and reads of recent
 * events should not go to the file every time. Texts larger than a quarter of the bound are not kept.
 */

/** Default bound: 4 MiB of text (UTF-16 code units × 2). */
export const TEXT_CACHE_BYTES = 4 * 1024 * 1024;

export class TextCache {
  private readonly texts = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly max = TEXT_CACHE_BYTES) {}

  get(id: string): string | undefined {
    const t = this.texts.get(id);
    if (t === undefined) return undefined;
    this.texts.delete(id);
    this.texts.set(id, t);
    return t;
  }

  set(id: string, text: string): void {
    this.delete(id);
    const size = text.length * 2;
    if (size > this.max / 4) return;
    this.texts.set(id, text);
    this.bytes += size;
    for (const [oldId, old] of this.texts) {
      if (this.bytes <= this.max) break;
      this.texts.delete(oldId);
      this.bytes -= old.length * 2;
    }
  }

  delete(id: string): void {
    const t = this.texts.get(id);
    if (t === undefined) return;
    this.texts.delete(id);
    this.bytes -= t.length * 2;
  }
}
