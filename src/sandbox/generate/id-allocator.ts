/**
 * Snowflake-style 64-bit ids, like the exchange's order, fill and bill ids: the time in the
 * high bits makes ids increase with time; an account partition and a per-millisecond sequence
 * in the low bits make them unique across accounts and within a crowded millisecond.
 *
 * id = base + (t - originMs) * 2^22 + partition * 2^16 + sequence
 *
 * With a base of 6e17 and a one-year history the ids stay 18-digit decimals, far above 2^53
 * (exchange-notes "Numbers": JSON.parse would corrupt them).
 */

const TIME_SHIFT = 4194304n; // 2^22
const PARTITION_SHIFT = 65536; // 2^16

/** The most partitions (accounts) one id space can hold. */
export const MAX_PARTITIONS = 64;

/** Hands out increasing unique ids; calls must come in non-decreasing time order. */
export class IdAllocator {
  private lastMs = Number.NEGATIVE_INFINITY;
  private sequence = 0;
  private readonly partitionOffset: bigint;

  /**
   * @param base - the id of the first millisecond of partition 0
   * @param originMs - the epoch ms that maps to `base` (no id may be asked for before it)
   * @param partition - 0 <= partition < {@link MAX_PARTITIONS}, one per account
   */
  constructor(
    private readonly base: bigint,
    private readonly originMs: number,
    partition: number,
  ) {
    if (!Number.isInteger(partition) || partition < 0 || partition >= MAX_PARTITIONS) {
      throw new RangeError(`partition ${partition} is outside [0, ${MAX_PARTITIONS})`);
    }
    this.partitionOffset = BigInt(partition * PARTITION_SHIFT);
  }

  /** The next id at epoch ms `t`. */
  next(t: number): bigint {
    if (t < this.lastMs || t < this.originMs) throw new RangeError(`id requested at ${t}, before ${Math.max(this.lastMs, this.originMs)}`);
    if (t === this.lastMs) {
      this.sequence++;
      if (this.sequence >= PARTITION_SHIFT) throw new RangeError(`more than ${PARTITION_SHIFT} ids in millisecond ${t}`);
    } else {
      this.lastMs = t;
      this.sequence = 0;
    }
    return this.base + BigInt(t - this.originMs) * TIME_SHIFT + this.partitionOffset + BigInt(this.sequence);
  }
}
