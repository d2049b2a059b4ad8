/**
 * Seeded pseudo-random numbers for the sandbox generator.
 *
 * sfc32 (Chris Doty-Humphrey's Small Fast Counting generator, 128-bit state) is fast in JS
 * because it only uses 32-bit integer operations. Draws are only ever combined with + - * /
 * and Math.floor/round: those are exactly specified by IEEE 754, whereas Math.log, Math.exp and
 * friends are not required to be correctly rounded, and could differ between platforms or Node
 * versions. That keeps the generated data identical everywhere for the same seed.
 */

const HEX_PAIRS: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A deterministic source of random draws. Not for cryptography. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** Starts from four 32-bit words; prefer {@link createRng}, which derives them from a seed and a path. */
  constructor(a: number, b: number, c: number, d: number) {
    this.a = a | 0;
    this.b = b | 0;
    this.c = c | 0;
    this.d = d | 0;
    // Warm-up: the first outputs of a freshly seeded sfc32 are correlated with the seed words.
    for (let i = 0; i < 15; i++) this.uint32();
  }

  /** The next raw 32-bit draw, as an unsigned integer. */
  uint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A uniform float in [0, 1). */
  float(): number {
    return this.uint32() / 4294967296;
  }

  /** A uniform float in [min, max). */
  range(min: number, max: number): number {
    return min + (max - min) * this.float();
  }

  /** A uniform integer in [min, maxExclusive). */
  int(min: number, maxExclusive: number): number {
    return min + Math.floor((maxExclusive - min) * this.float());
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.float() < p;
  }

  /** A uniformly chosen element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(items.length * this.float())];
    if (item === undefined) throw new RangeError('pick from an empty array');
    return item;
  }

  /** The index of an element chosen with probability proportional to its (non-negative) weight. */
  weightedIndex(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let x = this.float() * total;
    for (let i = 0; i < weights.length; i++) {
      x -= weights[i] ?? 0;
      if (x < 0) return i;
    }
    return weights.length - 1;
  }

  /**
   * An approximately standard normal draw: the Irwin-Hall sum of four uniforms, rescaled to
   * variance 1. Bounded to about +-3.5, which suits price steps (no absurd single-step jumps).
   */
  normal(): number {
    const sum = this.float() + this.float() + this.float() + this.float();
    return (sum - 2) * 1.7320508075688772;
  }

  /** A count whose expectation is `expected`: its floor, plus one with the fractional part as probability. */
  roundStochastic(expected: number): number {
    const whole = Math.floor(expected);
    return whole + (this.float() < expected - whole ? 1 : 0);
  }

  /** `length` lowercase hexadecimal characters. */
  hex(length: number): string {
    let out = '';
    while (out.length < length) {
      const w = this.uint32();
      out += `${HEX_PAIRS[w & 0xff]}${HEX_PAIRS[(w >>> 8) & 0xff]}${HEX_PAIRS[(w >>> 16) & 0xff]}${HEX_PAIRS[w >>> 24]}`;
    }
    return out.length === length ? out : out.slice(0, length);
  }

  /** `length` decimal digits, the first one not zero. */
  digits(length: number): string {
    let out = String(1 + this.int(0, 9));
    while (out.length < length) out += String(this.int(0, 10));
    return out;
  }
}

/** murmur3's 32-bit finalizer: spreads every input bit over the whole word. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/**
 * A generator for one concern of one seed, e.g. `createRng(seed, 'account', 2, 'spot')`.
 * Independent concerns draw from independent streams, so adding draws to one concern does not
 * shift the data of another.
 */
export function createRng(seed: number, ...path: ReadonlyArray<string | number>): Rng {
  let h1 = mix32(seed ^ 0x9e3779b9);
  let h2 = mix32(seed ^ 0x7f4a7c15);
  let h3 = mix32(Math.floor(seed / 4294967296) ^ 0x165667b1);
  let h4 = mix32(h1 ^ h2 ^ 0x27d4eb2f);
  for (const part of path) {
    const text = typeof part === 'number' ? `#${part}` : part;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      h1 = mix32(h1 ^ code ^ h4);
      h2 = mix32(h2 + h1);
      h3 = mix32(h3 ^ h2);
      h4 = mix32(h4 + h3);
    }
    h1 = mix32(h1 ^ 0x5bd1e995);
  }
  return new Rng(h1, h2, h3, h4);
}
