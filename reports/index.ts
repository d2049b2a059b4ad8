import type { ReportSpec } from '../src/export/report-definition.ts';
import { balancesReport } from './balances.ts';
import { feesReport } from './fees.ts';
import { holdingsReport } from './holdings.ts';
import { journalReport } from './journal.ts';
import { pnlReport } from './pnl.ts';
import { rebatesReport } from './rebates.ts';

/** Every report, in the order `exledger run` writes them. */
export const REPORTS: readonly ReportSpec[] = [pnlReport, feesReport, rebatesReport, balancesReport, journalReport, holdingsReport];
