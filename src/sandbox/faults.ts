/**
 * Deterministic fault injection: the failures a real exchange and its gateways produce
 * (5xx with JSON or HTML bodies, connection resets, slow answers, truncated bodies). A fault
 * never yields a wrong-but-valid answer and never changes state: the server applies it before
 * a trading request would run, or to a read-only answer's bytes.
 */

/** The kinds of fault, as recorded in the request log. */
export type FaultKind = 'reset' | 'server-error' | 'slow' | 'malformed';

/** How often faults happen: none, light (~2% of requests) or heavy (~20%). */
export type FaultLevel = 'none' | 'light' | 'heavy';

/** One planned fault. */
export type FaultPlan =
  | { kind: 'reset' }
  | { kind: 'server-error'; status: 500 | 502 | 503; html: boolean }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'malformed'; cutFraction: number };

const RATES: Record<FaultLevel, number> = { none: 0, light: 0.02, heavy: 0.2 };

/** Relative frequency of each kind among faults. */
const KIND_WEIGHTS: readonly [FaultKind, number][] = [
  ['server-error', 0.4],
  ['reset', 0.2],
  ['slow', 0.15],
  ['malformed', 0.25],
];

/** mulberry32: a small, fast, seedable PRNG (uniform in [0, 1)). */
export function createPrng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** Decides, request by request, whether and how to fail. */
export class FaultInjector {
  private readonly rate: number;
  private readonly random: () => number;
  private readonly slowMs: readonly [number, number];

  /** `slowMs` is the [min, max] delay of a slow answer. */
  constructor(level: FaultLevel, seed: number, slowMs: readonly [number, number]) {
    this.rate = RATES[level];
    this.random = createPrng(seed);
    this.slowMs = slowMs;
  }

  /** The fault for the next exchange request, or null. Draws from the PRNG only when faults are on. */
  next(): FaultPlan | null {
    if (this.rate === 0 || this.random() >= this.rate) return null;
    let pick = this.random();
    let kind: FaultKind = 'server-error';
    for (const [candidate, weight] of KIND_WEIGHTS) {
      if (pick < weight) {
        kind = candidate;
        break;
      }
      pick -= weight;
    }
    switch (kind) {
      case 'reset':
        return { kind };
      case 'server-error': {
        const statuses = [500, 502, 503] as const;
        return { kind, status: statuses[Math.floor(this.random() * statuses.length)] ?? 500, html: this.random() < 0.5 };
      }
      case 'slow': {
        const [min, max] = this.slowMs;
        return { kind, delayMs: Math.round(min + this.random() * (max - min)) };
      }
      case 'malformed':
        return { kind, cutFraction: 0.1 + this.random() * 0.8 };
    }
  }
}

const STATUS_TEXT: Record<number, string> = { 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Temporarily Unavailable' };

/** The body of an injected 5xx: a JSON error or a gateway's HTML page. */
export function serverErrorBody(status: number, html: boolean, now: number): { contentType: string; body: string } {
  const text = STATUS_TEXT[status] ?? 'Server Error';
  if (html) {
    return {
      contentType: 'text/html',
      body: `<html>\r\n<head><title>${status} ${text}</title></head>\r\n<body>\r\n<center><h1>${status} ${text}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
    };
  }
  return { contentType: 'application/json', body: JSON.stringify({ code: String(status), msg: text, requestTime: now, data: null }) };
}

/**
 * A proper prefix of a JSON object or array text, which is never valid JSON (its closing
 * bracket is missing). At least one character is kept and one dropped.
 */
export function truncateBody(body: string, cutFraction: number): string {
  const keep = Math.min(body.length - 1, Math.max(1, Math.floor(body.length * cutFraction)));
  return body.slice(0, keep);
}
