/*
 * "Did you mean" for a mistyped word, the same rule for the CLI's subcommands (`loom stauts`) and
 * the daemon's slash commands (`/opne`): the closest known word within two edits.
 */

/** Edit distance of two short words, a swap of neighbours counting once. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The known word closest to `word` (at most two edits, and fewer than the word's length), or undefined. */
export function closestWord(word: string, known: Iterable<string>): string | undefined {
  let best: { w: string; d: number } | undefined;
  for (const w of known) {
    if (w === word) continue;
    const d = editDistance(w, word);
    if (d <= 2 && d < word.length && (best === undefined || d < best.d)) best = { w, d };
  }
  return best?.w;
}
