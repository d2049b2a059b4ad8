import type { AccountConfig } from '../config/config.ts';
import { isEndpointId } from '../exchange/endpoints.ts';
import type { LearnedRate, RateBudget } from '../exchange/rate-budget.ts';
import type { Database } from '../store/database.ts';
import { changeFacts, readFacts, type FactChange } from '../store/meta-store.ts';

/**
 * The rates a budget learned from the exchange's 429s, remembered in meta.facts so the next
 * process starts at them instead of tripping the limit again to relearn them.
 *
 * Key scheme: fact `learned_rate:<endpoint id>` (e.g. `learned_rate:futures.fills`), value the
 * weight per second the budget may spend (RateBudget LearnedRate). The account column holds the
 * scope: `*` for the per-IP budget, which every account leaving from this address shares (`*`
 * is no account name: names are letters, digits, - and _), the account's name for its key's
 * per-UID budget (the name, never the key: no credential goes into the database). A budget back
 * at its configured rate forgets its fact.
 */

/** meta.facts prefix of a learned rate. */
export const LEARNED_RATE = 'learned_rate:';
/** meta.facts account of facts about the per-IP budgets. */
export const IP_SCOPE_ACCOUNT = '*';

/** Remembers a budget's learned rates while a sync runs; `close` writes the last ones. */
export interface LearnedRateMemory {
  close(): Promise<void>;
}

/**
 * Starts `budget` at the rates remembered for these accounts and the IP, then writes each rate it
 * learns as soon as it learns it (a run may be killed at any time), and once more on close.
 */
export async function rememberLearnedRates(db: Database, budget: RateBudget, accounts: readonly AccountConfig[]): Promise<LearnedRateMemory> {
  // Where each budget scope's facts live; two accounts with one key share its UID budget.
  const owners = new Map<string, string[]>([['ip', [IP_SCOPE_ACCOUNT]]]);
  for (const account of accounts) owners.set(`uid:${account.apiKey}`, [...(owners.get(`uid:${account.apiKey}`) ?? []), account.name]);

  const stored = new Map<string, string>();
  const remembered: LearnedRate[] = [];
  for (const [scope, names] of owners) {
    for (const name of names) {
      for (const [fact, value] of Object.entries(await readFacts(db, name))) {
        if (!fact.startsWith(LEARNED_RATE)) continue;
        stored.set(factKey(name, fact), value);
        const endpoint = fact.slice(LEARNED_RATE.length);
        const weightPerSecond = Number(value);
        if (isEndpointId(endpoint) && Number.isFinite(weightPerSecond) && weightPerSecond > 0) remembered.push({ scope, endpoint, weightPerSecond });
      }
    }
  }
  budget.adoptLearnedRates(remembered);

  const save = async () => {
    const changes: FactChange[] = [];
    for (const rate of budget.learnedRates()) {
      const value = rate.weightPerSecond === null ? null : rate.weightPerSecond.toFixed(3);
      for (const account of owners.get(rate.scope) ?? []) {
        const fact = `${LEARNED_RATE}${rate.endpoint}`;
        if ((stored.get(factKey(account, fact)) ?? null) !== value) changes.push({ account, fact, value });
      }
    }
    if (changes.length === 0) return;
    await changeFacts(db, changes);
    for (const { account, fact, value } of changes) {
      if (value === null) stored.delete(factKey(account, fact));
      else stored.set(factKey(account, fact), value);
    }
  };
  // One write at a time; rates learned meanwhile go into the next one.
  let saving: Promise<void> = Promise.resolve();
  let queued = false;
  const schedule = () => {
    if (queued) return;
    queued = true;
    saving = saving
      .then(() => {
        queued = false;
        return save();
      })
      // A failed write is tried again by the next one, and by close, which reports it.
      .catch(() => undefined);
  };
  const unsubscribe = budget.onLearned(schedule);
  return {
    async close() {
      unsubscribe();
      await saving;
      await save();
    },
  };
}

function factKey(account: string, fact: string): string {
  return `${account}\u0000${fact}`;
}
