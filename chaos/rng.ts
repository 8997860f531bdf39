/**
 * Seeded randomness for the chaos run. Two kinds:
 * - {@link unit}: a pure function of the seed and labels (e.g. `unit(seed, 'fail', runKey, node)`),
 *   so a decision does not depend on the order in which concurrent code asks for it;
 * - {@link Rng}: a sequential stream (mulberry32) for the fault schedule, whose order is fixed.
 */

/** A 32-bit hash of the labels (FNV-1a, then a murmur3 finaliser). */
export function hash32(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  const s = parts.map(String).join('\u0001');
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A number in [0, 1) determined by the labels alone. */
export function unit(...parts: (string | number)[]): number {
  return hash32(...parts) / 2 ** 32;
}

/** An integer in [lo, hi] determined by the labels alone. */
export function intOf(lo: number, hi: number, ...parts: (string | number)[]): number {
  return lo + Math.floor(unit(...parts) * (hi - lo + 1));
}

/** A sequential seeded generator (mulberry32). */
export class Rng {
  private state: number;

  constructor(...seedParts: (string | number)[]) {
    this.state = hash32(...seedParts);
  }

  /** A number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** A number in [lo, hi). */
  between(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  /** An exponentially distributed number with the given mean. */
  exp(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** One of the keys, chosen with probability proportional to its weight. */
  weighted<K extends string>(weights: Record<K, number>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((s, [, w]) => s + w, 0);
    let r = this.next() * total;
    for (const [k, w] of entries) {
      if ((r -= w) < 0) return k;
    }
    return entries[entries.length - 1][0];
  }

  /** A shuffled copy (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const a = [...items];
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  }
}
