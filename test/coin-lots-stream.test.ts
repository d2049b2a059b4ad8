import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lotsTaken, matchCoinStream, type CoinEvent, type CoinEventResult, type PooledCoinEvent } from '../src/books/coin-lots.ts';
import { COST_METHODS, type CostMethod } from '../src/models/settings.ts';
import { matchCoinPools, segmentsOf } from './support/coin-lots-oracle.ts';

/**
 * The books' lots streamed (int_coin_lots reads a coin's events a chunk at a time and holds only
 * open lots and unsettled events) equal, result for result and in order, the whole-array match
 * they replaced (test/support/coin-lots-oracle.ts): every method, lots of unknown cost, disposals
 * beyond what is held, withdrawals carried to another pool's deposits (chains of them, and
 * deposits naming no withdrawal), uk's 30 days, and the stream cut into chunks anywhere. And the
 * lots one disposal took (`exledger explain`), read from a stream no further than needed.
 */

const POOLS = ['a', 'b', 'c'] as const;

interface Draft {
  pool: number;
  dayStep: number;
  direction: 'in' | 'out';
  units: bigint;
  value: bigint | null;
  /** in: market, declared or carried; out: market or carrying_cost. */
  special: boolean;
  /** A carried deposit: which withdrawal (of those drafted) it names, modulo their count; -1: one that is not there. */
  ref: number;
}

const draftArb: fc.Arbitrary<Draft> = fc.record({
  pool: fc.integer({ min: 0, max: POOLS.length - 1 }),
  dayStep: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 40 })),
  direction: fc.constantFrom('in' as const, 'out' as const),
  units: fc.bigInt({ min: 1n, max: 2_000n }),
  value: fc.option(fc.bigInt({ min: 0n, max: 5_000_000n }), { freq: 4 }),
  special: fc.boolean(),
  ref: fc.integer({ min: -1, max: 20 }),
});

/** Each pool's events (seq from 1, days not decreasing), withdrawals named by entryRef, carried deposits naming them. */
function poolsOf(drafts: readonly Draft[]): Map<string, CoinEvent[]> {
  const pools = new Map<string, CoinEvent[]>();
  const days = new Map<string, number>();
  const withdrawals: string[] = [];
  drafts.forEach((draft, index) => {
    const pool = POOLS[draft.pool]!;
    const day = (days.get(pool) ?? 20_000) + draft.dayStep;
    days.set(pool, day);
    const events = pools.get(pool) ?? [];
    pools.set(pool, events);
    const entryRef = `bill/${pool}/${index}`;
    let basis: CoinEvent['basis'] = 'market';
    let transferRef: string | null = null;
    if (draft.direction === 'out' && draft.special) {
      basis = 'carrying_cost';
      withdrawals.push(entryRef);
    } else if (draft.direction === 'in' && draft.special) {
      basis = draft.ref % 2 === 0 ? 'declared' : 'carried';
      if (basis === 'carried') transferRef = draft.ref < 0 || withdrawals.length === 0 ? 'bill/nowhere/0' : withdrawals[draft.ref % withdrawals.length]!;
    }
    events.push({
      seq: BigInt(events.length + 1),
      day,
      direction: draft.direction,
      units: draft.units,
      value: basis === 'carrying_cost' || basis === 'carried' ? null : draft.value,
      basis,
      transferRef,
      entryRef,
    });
  });
  return new Map([...pools].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The pools' events as a stream in chunks of `size` (pool, then seq order). */
function chunked(pools: ReadonlyMap<string, readonly CoinEvent[]>, size: number): () => AsyncIterable<PooledCoinEvent[]> {
  const all = [...pools].flatMap(([pool, events]) => events.map((event) => ({ pool, event })));
  return async function* () {
    for (let start = 0; start < all.length; start += size) yield all.slice(start, start + size);
  };
}

async function streamed(methods: readonly CostMethod[], pools: ReadonlyMap<string, readonly CoinEvent[]>, size: number): Promise<Map<CostMethod, Map<string, CoinEventResult[]>>> {
  const refs = new Set([...pools.values()].flatMap((events) => events.filter((event) => event.basis === 'carried').map((event) => event.transferRef!)));
  const out = new Map<CostMethod, Map<string, CoinEventResult[]>>(methods.map((method) => [method, new Map()]));
  await matchCoinStream(methods, refs, chunked(pools, size), (method, pool, _event, result) => {
    const byPool = out.get(method)!;
    const list = byPool.get(pool) ?? [];
    byPool.set(pool, list);
    list.push(result);
  });
  return out;
}

describe('books: the lots streamed', () => {
  it('equal the whole-array match, result for result, for every method and any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(draftArb, { minLength: 1, maxLength: 80 }), fc.integer({ min: 1, max: 9 }), async (drafts, size) => {
        const pools = poolsOf(drafts);
        const got = await streamed(COST_METHODS, pools, size);
        for (const method of COST_METHODS) {
          const want = matchCoinPools(method, pools);
          expect(got.get(method), method).toEqual(new Map([...want].filter(([, results]) => results.length > 0)));
        }
      }),
      { numRuns: 300, seed: 28 },
    );
  });

  it('resumed from any saved state of each pool and method, emits and saves exactly what the whole match does from there (int_coin_lots incremental)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(draftArb, { minLength: 1, maxLength: 80 }), fc.integer({ min: 1, max: 9 }), fc.array(fc.nat(), { minLength: 15, maxLength: 15 }), async (drafts, size, picks) => {
        const pools = poolsOf(drafts);
        const refs = new Set([...pools.values()].flatMap((events) => events.filter((event) => event.basis === 'carried').map((event) => event.transferRef!)));
        const key = (method: CostMethod, pool: string) => `${method}/${pool}`;
        const run = async (options: Parameters<typeof matchCoinStream>[4]) => {
          const results = new Map<string, { seq: bigint; result: CoinEventResult }[]>();
          const states = new Map<string, { nextSeq: bigint; state: string; nextDay: number }[]>();
          await matchCoinStream(
            COST_METHODS,
            refs,
            chunked(pools, size),
            (method, pool, event, result) => {
              const list = results.get(key(method, pool)) ?? [];
              results.set(key(method, pool), list);
              list.push({ seq: event.seq, result });
            },
            {
              ...options,
              // A state before every day's first event (but a pool's first).
              checkpointsOf: (pool, method) => ({
                isCheckpoint: () => true,
                onCheckpoint: (nextSeq, state, _previousDay, nextDay) => {
                  const list = states.get(key(method, pool)) ?? [];
                  states.set(key(method, pool), list);
                  list.push({ nextSeq, state, nextDay });
                },
              }),
            },
          );
          return { results, states };
        };
        const whole = await run({});
        // Saving states changes nothing.
        for (const method of COST_METHODS) {
          for (const [pool, want] of matchCoinPools(method, pools)) expect((whole.results.get(key(method, pool)) ?? []).map(({ result }) => result), key(method, pool)).toEqual(want);
        }
        // Each pool and method resumes from one of its states (or from its first event), picked at random.
        const resumes = new Map<string, { fromSeq: bigint; state?: string }>();
        let index = 0;
        for (const method of COST_METHODS) {
          for (const pool of pools.keys()) {
            const saved = whole.states.get(key(method, pool)) ?? [];
            const pick = picks[index++ % picks.length]! % (saved.length + 1);
            const chosen = saved[pick - 1];
            resumes.set(key(method, pool), chosen === undefined ? { fromSeq: 1n } : { fromSeq: chosen.nextSeq, state: chosen.state });
          }
        }
        // The withdrawals before a resumed pool's first event keep the whole match's costs.
        const carriedCosts = new Map<CostMethod, Map<string, bigint | null>>();
        for (const method of COST_METHODS) {
          const costs = new Map<string, bigint | null>();
          for (const [pool, events] of pools) {
            const fromSeq = resumes.get(key(method, pool))!.fromSeq;
            const results = new Map((whole.results.get(key(method, pool)) ?? []).map(({ seq, result }) => [seq, result]));
            for (const event of events) {
              if (event.seq < fromSeq && event.basis === 'carrying_cost' && refs.has(event.entryRef!)) {
                const result = results.get(event.seq)!;
                costs.set(event.entryRef!, result.costKnown ? result.cost : null);
              }
            }
          }
          carriedCosts.set(method, costs);
        }
        const resumed = await run({ resumeOf: (pool, method) => resumes.get(key(method, pool)), carriedCosts });
        for (const [name, resume] of resumes) {
          expect(resumed.results.get(name) ?? [], `${name} from ${resume.fromSeq}`).toEqual((whole.results.get(name) ?? []).filter(({ seq }) => seq >= resume.fromSeq));
          expect(resumed.states.get(name) ?? [], `${name} from ${resume.fromSeq}`).toEqual((whole.states.get(name) ?? []).filter(({ nextSeq }) => nextSeq > resume.fromSeq));
        }
      }),
      { numRuns: 300, seed: 28 },
    );
  });

  it('carries a withdrawal down a chain of pools (a -> b -> c) and settles it in rounds', async () => {
    const event = (seq: number, day: number, direction: 'in' | 'out', units: bigint, value: bigint | null, basis: CoinEvent['basis'], refs: { entryRef: string; transferRef?: string }): CoinEvent => ({
      seq: BigInt(seq),
      day,
      direction,
      units,
      value,
      basis,
      transferRef: refs.transferRef ?? null,
      entryRef: refs.entryRef,
    });
    const pools = new Map<string, CoinEvent[]>([
      ['a', [event(1, 100, 'in', 10n, 1_000n, 'market', { entryRef: 'a1' }), event(2, 101, 'out', 4n, null, 'carrying_cost', { entryRef: 'wa' })]],
      ['b', [event(1, 101, 'in', 4n, null, 'carried', { entryRef: 'b1', transferRef: 'wa' }), event(2, 102, 'out', 4n, null, 'carrying_cost', { entryRef: 'wb' })]],
      ['c', [event(1, 102, 'in', 4n, null, 'carried', { entryRef: 'c1', transferRef: 'wb' }), event(2, 103, 'out', 2n, 900n, 'market', { entryRef: 'c2' })]],
    ]);
    const got = await streamed(['fifo'], pools, 1);
    const c = got.get('fifo')!.get('c')!;
    // 4 units of a's 10 at 1,000 cost 400, carried to b, then to c; c sells half for 900.
    expect(c.map((result) => [result.cost, result.costKnown, result.proceeds, result.gain, result.holding, result.carrying])).toEqual([
      [400n, true, null, null, 4n, 400n],
      [200n, true, 900n, 700n, 2n, 200n],
    ]);
    expect(got).toEqual(new Map([['fifo', matchCoinPools('fifo', pools)]]));
  });

  it("a disposal's lots (explain): the whole match's segments, read no further than the disposal (uk: its 30 days)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(draftArb, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 7 }), fc.nat(), async (drafts, size, pick) => {
        // One pool, each lot's value its cost (as explain reads int_coin_lots' resolved costs).
        const events = poolsOf(drafts.map((draft) => ({ ...draft, pool: 0, special: false }))).get('a')!;
        const disposals = events.filter((event) => event.direction === 'out');
        if (disposals.length === 0) return;
        const disposal = disposals[pick % disposals.length]!;
        for (const method of COST_METHODS) {
          let read = 0;
          const stream = async function* () {
            for (let start = 0; start < events.length; start += size) {
              read = Math.min(start + size, events.length);
              yield events.slice(start, start + size);
            }
          };
          const want = segmentsOf(method, events, (index) => events[index]!.value ?? 0n).get(disposal.seq) ?? [];
          expect(await lotsTaken(method, stream(), disposal.seq), method).toEqual(want);
          // Read up to the chunk holding the first event after the disposal's (uk: after its 30 days).
          const needed = events.findIndex((event) => event.seq > disposal.seq && (method !== 'uk' || event.day > disposal.day + 30));
          if (needed >= 0) expect(read, method).toBeLessThanOrEqual(Math.floor(needed / size) * size + size);
        }
      }),
      { numRuns: 200, seed: 28 },
    );
  });
});

