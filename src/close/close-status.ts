import type { Database } from '../store/database.ts';
import { periodAfter, readClosedPeriods, type ClosedPeriod } from '../store/period-closes.ts';

/** The closed periods and the adjustments pending in the first open period (status, run). */
export interface CloseStatus {
  /** The closes in force, oldest first, with the note each was closed with. */
  closed: (ClosedPeriod & { note: string | null })[];
  /** The first open period (after the latest close), where adjustments are booked; null: none closed. */
  openPeriod: string | null;
  /** Adjustments pending there, per mart: changes of closed figures since their close; `unknown`: of them, those whose value is unknown. */
  pending: { mart: string; figures: number; unknown: number }[];
}

/** Reads the closes and the pending adjustments (as of the last build) from a database or published copy. */
export async function readCloseStatus(db: Database): Promise<CloseStatus> {
  const closes = await readClosedPeriods(db);
  const notes = new Map<number, string | null>();
  if (closes.length > 0) {
    for (const row of await db.all<{ version: number; note: string | null }>("SELECT version, note FROM meta.period_closes WHERE action = 'close'")) notes.set(Number(row.version), row.note);
  }
  const latest = closes.at(-1);
  const built = await db.all("SELECT 1 FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'marts' AND table_name = 'period_adjustments' AND column_name = 'status'");
  const pending =
    latest === undefined || built.length === 0
      ? []
      : (
          await db.all<{ mart: string; figures: string; unknown: string }>(
            "SELECT mart, count(*) AS figures, count(*) FILTER (WHERE adjustment IS NULL) AS unknown FROM marts.period_adjustments WHERE status = 'pending' AND booked_from > CAST($1 AS DATE) GROUP BY mart ORDER BY mart",
            [latest.to],
          )
        ).map((row) => ({ mart: row.mart, figures: Number(row.figures), unknown: Number(row.unknown) }));
  return {
    closed: closes.map((close) => ({ ...close, note: notes.get(close.version) ?? null })),
    openPeriod: latest === undefined ? null : periodAfter(latest.kind, latest.to).label,
    pending,
  };
}

/** The status lines about closes: each closed period, then the pending adjustments. */
export function formatCloseStatus(status: CloseStatus): string[] {
  if (status.closed.length === 0) return ['closed periods: none (exledger close --period … closes one)'];
  const lines = ['closed periods:', ...status.closed.map((close) => `  ${close.label}  ${close.from} to ${close.to}  closed on ${close.closedAt} by ${close.closedBy} (close ${close.version})${close.note === null ? '' : `: ${close.note}`}`)];
  const figures = status.pending.reduce((sum, mart) => sum + mart.figures, 0);
  const unknown = status.pending.reduce((sum, mart) => sum + mart.unknown, 0);
  if (figures === 0) lines.push(`adjustments to closed periods pending in ${status.openPeriod}: none (as of the last build)`);
  else {
    lines.push(
      `adjustments to closed periods pending in ${status.openPeriod}: ${figures} figure${figures === 1 ? '' : 's'} changed since ${figures === 1 ? 'its' : 'their'} close${unknown === 0 ? '' : `, ${unknown} of them unknown (a price is missing)`} (as of the last build; marts.period_adjustments): ${status.pending.map((mart) => `${mart.mart} ${mart.figures}`).join(', ')}`,
    );
  }
  return lines;
}
