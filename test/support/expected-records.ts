import type { SandboxAccount } from '../../src/sandbox/model.ts';
import { stringifyWire } from '../../src/sandbox/wire-json.ts';

/**
 * What a complete sync of a sandbox account must have stored, per history stream: the JSON text
 * of every record exactly as the sandbox serves it (ids, amounts, unknown fields, twins).
 */
export function expectedRecordTexts(account: SandboxAccount, untilMs = Infinity): Record<string, string[]> {
  const visible = <T extends { t: number }>(records: readonly T[]) => records.filter((record) => record.t < untilMs);
  return {
    spot_fills: [...account.spotFills.values()].flatMap((fills) => visible(fills).map((fill) => stringifyWire(fill.wire))).sort(),
    funding_bills: visible(account.fundingBills).map((bill) => stringifyWire(bill.wire)).sort(),
    transfer_records: visible(account.transferRecords).map((record) => stringifyWire(record.wire)).sort(),
    futures_fills: visible(account.futuresFills).map((fill) => stringifyWire(fill.wire)).sort(),
    affiliate_commissions: visible(account.commissions).map((record) => stringifyWire(record.wire)).sort(),
  };
}
