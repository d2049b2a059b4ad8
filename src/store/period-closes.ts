import dayjs from 'dayjs';
import utc from 'dayjs/plugin/utc.js';
import { parsePeriod, type ReportPeriod } from '../export/period.ts';
import { ACCOUNT_COLUMN, type TableDescription } from './comments.ts';
import type { Database } from './database.ts';

dayjs.extend(utc);

/**
 * Closed periods (docs/workbooks.md "Closing a period"): the periods the controller closed, in
 * force (settings.closed_periods, which the models read), every close and reopen ever made
 * (meta.period_closes, the audit trail), and the workbooks each close wrote, byte for byte
 * (meta.closed_workbooks). Schema `closed` holds the marts' rows as each close froze them.
 */

/** The kinds of period a close covers (reports.period). */
export type ClosePeriodKind = 'month' | 'quarter' | 'year';

/** A close in force. */
export interface ClosedPeriod {
  /** The close's version in meta.period_closes. */
  version: number;
  label: string;
  kind: ClosePeriodKind;
  /** First and last day (YYYY-MM-DD, reporting zone), both included. */
  from: string;
  to: string;
  timeZone: string;
  closedAt: string;
  closedBy: string;
}

/** The tables' statements (run when a database is opened for writing: src/store/database.ts). */
export const PERIOD_CLOSE_TABLES = `
  CREATE SCHEMA IF NOT EXISTS settings;
  CREATE SCHEMA IF NOT EXISTS closed;
  CREATE TABLE IF NOT EXISTS meta.period_closes (
    version INTEGER NOT NULL PRIMARY KEY,
    action VARCHAR NOT NULL,
    period_label VARCHAR NOT NULL,
    period_kind VARCHAR NOT NULL,
    period_from DATE NOT NULL,
    period_to DATE NOT NULL,
    time_zone VARCHAR NOT NULL,
    acted_at TIMESTAMPTZ NOT NULL,
    acted_by VARCHAR NOT NULL,
    note VARCHAR,
    build_settings VARCHAR,
    checksums VARCHAR,
    frozen_rows VARCHAR,
    reopened_version INTEGER
  );
  CREATE TABLE IF NOT EXISTS meta.closed_workbooks (
    version INTEGER NOT NULL,
    file_name VARCHAR NOT NULL,
    report VARCHAR NOT NULL,
    account VARCHAR,
    sha256 VARCHAR NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (version, file_name)
  );
  CREATE TABLE IF NOT EXISTS settings.closed_periods (
    version INTEGER NOT NULL PRIMARY KEY,
    period_label VARCHAR NOT NULL,
    period_kind VARCHAR NOT NULL,
    period_from DATE NOT NULL,
    period_to DATE NOT NULL,
    time_zone VARCHAR NOT NULL,
    closed_at TIMESTAMPTZ NOT NULL,
    closed_by VARCHAR NOT NULL
  );
`;

const period = (what: string) => [
  { name: 'period_label', description: `The period ${what}: 2026-10, 2026-Q4 or 2026` },
  { name: 'period_kind', description: 'month, quarter or year (reports.period)' },
  { name: 'period_from', description: 'Its first day', unit: 'local day, reporting zone' },
  { name: 'period_to', description: 'Its last day (included)', unit: 'local day, reporting zone' },
  { name: 'time_zone', description: 'The reporting time zone its days were cut in' },
];

/** What the tables mean (written as their comments). */
export const PERIOD_CLOSE_DESCRIPTIONS: readonly TableDescription[] = [
  {
    schema: 'meta',
    table: 'period_closes',
    description: 'The audit trail of closed periods: every close and reopen, by whom, when, why, with the checksums of the workbooks a close wrote. Never updated or deleted. Key: version.',
    columns: [
      { name: 'version', description: 'Order of the act (1, 2, …)', unit: 'count' },
      { name: 'action', description: 'close or reopen' },
      ...period('closed or reopened'),
      { name: 'acted_at', description: 'When', unit: 'UTC' },
      { name: 'acted_by', description: 'Who: exledger close/reopen --by, else EXLEDGER_USER, USER or LOGNAME' },
      { name: 'note', description: 'close: its --note (null without one); reopen: its --reason' },
      { name: 'build_settings', description: 'close: the settings the frozen figures were built with (time zone, cost methods, pooling, reporting currency, prices file, journal)' },
      { name: 'checksums', description: 'close: the SHA-256 of each workbook and CSV it wrote, as JSON {"file": "sha256"} (their bytes: meta.closed_workbooks)' },
      { name: 'frozen_rows', description: 'close: rows frozen per mart in schema closed, as JSON {"marts.x": rows}' },
      { name: 'reopened_version', description: 'reopen: the version of the close it undid' },
    ],
  },
  {
    schema: 'meta',
    table: 'closed_workbooks',
    description: 'The workbooks and CSVs each close wrote, byte for byte: exledger report and run write these again for a closed period. Key: (version, file_name).',
    columns: [
      { name: 'version', description: 'The close that wrote it (meta.period_closes.version)' },
      { name: 'file_name', description: 'Its file name in reports.outDir, e.g. pnl-2026-10.xlsx' },
      { name: 'report', description: 'The report (reports/)' },
      { ...ACCOUNT_COLUMN, description: 'The one account it covers (exledger report --account); null: every account, consolidated' },
      { name: 'sha256', description: 'SHA-256 of its bytes, hex' },
      { name: 'bytes', description: 'The file' },
    ],
  },
  {
    schema: 'settings',
    table: 'closed_periods',
    description: 'The closed periods in force (a reopen removes its close and every later one): the models read it to keep closed figures as closed and book later changes as adjustments. Key: version.',
    columns: [
      { name: 'version', description: 'The close (meta.period_closes.version)' },
      ...period('closed'),
      { name: 'closed_at', description: 'When it was closed', unit: 'UTC' },
      { name: 'closed_by', description: 'Who closed it' },
    ],
  },
];

/** The closes in force, oldest first (none in a database never closed, or opened read-only before its first close). */
export async function readClosedPeriods(db: Database): Promise<ClosedPeriod[]> {
  const exists = await db.all("SELECT 1 FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = 'settings' AND table_name = 'closed_periods'");
  if (exists.length === 0) return [];
  const rows = await db.all<{ version: number; period_label: string; period_kind: ClosePeriodKind; period_from: string; period_to: string; time_zone: string; closed_at: string; closed_by: string }>(
    "SELECT version, period_label, period_kind, CAST(period_from AS VARCHAR) AS period_from, CAST(period_to AS VARCHAR) AS period_to, time_zone, strftime(closed_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS closed_at, closed_by FROM settings.closed_periods ORDER BY period_to",
  );
  return rows.map((row) => ({ version: Number(row.version), label: row.period_label, kind: row.period_kind, from: row.period_from, to: row.period_to, timeZone: row.time_zone, closedAt: row.closed_at, closedBy: row.closed_by }));
}

/** The period of this kind that starts the day after `to` (the first open period after a close). */
export function periodAfter(kind: ClosePeriodKind, to: string): ReportPeriod {
  const start = dayjs.utc(to).add(1, 'day');
  return parsePeriod(kind === 'month' ? start.format('YYYY-MM') : kind === 'quarter' ? `${start.year()}-Q${Math.floor(start.month() / 3) + 1}` : String(start.year()));
}

/** Whether schema `closed` has this table (a mart is frozen from the first close on). */
export async function hasClosedTable(db: Database, name: string): Promise<boolean> {
  return (await db.all("SELECT 1 FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = 'closed' AND table_name = $1", [name])).length > 0;
}
