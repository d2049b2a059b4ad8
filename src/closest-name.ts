import { distance } from 'fastest-levenshtein';

/**
 * The name a typo most likely meant: `statsu` → `status`, `sinse` → `since`, `spotBaseURL` →
 * `spotBaseUrl`; undefined when no name is close enough to suggest (`foo` suggests nothing).
 *
 * Close enough: an edit distance (case ignored) of at most 1 for names of 2 or 3 characters (nothing is guessed from one letter), 2
 * up to 7, 3 beyond (a swapped pair of letters counts 2, so `sycn` still finds `sync`); or the
 * start of exactly one name (`--spot` → `--spot-symbols`). Ties go to the earlier candidate.
 */
export function closestName(typed: string, candidates: readonly string[]): string | undefined {
  const lower = typed.toLowerCase();
  // One letter is too little to guess from (`-x` is not a typo of `-q`).
  if (lower.length < 2) return undefined;
  const limit = lower.length <= 3 ? 1 : lower.length <= 7 ? 2 : 3;
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const away = distance(lower, name.toLowerCase());
    if (away <= limit && (best === undefined || away < best.distance)) best = { name, distance: away };
  }
  if (best !== undefined) return best.name;
  const starting = lower.length >= 3 ? candidates.filter((name) => name.toLowerCase().startsWith(lower)) : [];
  return starting.length === 1 ? starting[0] : undefined;
}
