/** Text-like bytes for the compression tests: words drawn by a seeded LCG, so they compress well but not trivially. */
export function textLike(words: readonly string[], length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed, i = 0;
  while (i < length) {
    x = (x * 1103515245 + 12345) >>> 0;
    for (const ch of words[(x >>> 16) % words.length]) if (i < length) out[i++] = ch.charCodeAt(0);
  }
  return out;
}
