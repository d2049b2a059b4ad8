import { ConfigError, DataError } from '../errors.ts';
import { unitsText, type RoundedEntry, type RoundedLine } from './ledger-rounding.ts';
import { csvField } from './write-csv.ts';

/**
 * The import layouts of general ledgers the journal is written in (`exledger report journal
 * --format …`), one declaration each: the file's name, its header, how an entry is written and
 * what the import refuses. The sources of each layout are in docs/workbooks.md "Ledger imports".
 * write-ledger-exports.ts reads the mart, rounds the entries (ledger-rounding.ts) and hands each
 * one to every layout asked for.
 */

/** The ledgers' layouts, in the order the docs list them. */
export const LEDGER_FORMATS = ['quickbooks', 'xero', 'netsuite', 'hledger'] as const;
export type LedgerFormat = (typeof LEDGER_FORMATS)[number];

/** How dates are written for a ledger that reads them by its company's (or user's) preference. */
export const LEDGER_DATE_FORMATS = ['MM/DD/YYYY', 'DD/MM/YYYY'] as const;
export type LedgerDateFormat = (typeof LEDGER_DATE_FORMATS)[number];

/** The settings of the ledger imports (reports.ledger). */
export interface LedgerSettings {
  /**
   * Decimals of the ledger currency's minor unit, the amounts are rounded to; null: the reporting
   * currency's (ISO 4217, minor-unit.ts: 2, JPY 0). @default null
   */
  minorUnit: number | null;
  /** The ledger account each entry's rounding difference is posted to. @default 'Rounding differences' */
  roundingAccount: string;
  /** How QuickBooks Online and NetSuite dates are written: as the company's (the user's) date preference. @default 'MM/DD/YYYY' */
  dateFormat: LedgerDateFormat;
  xero: {
    /** Xero's TaxRate of every line: the full name of a tax rate of the organisation. @default 'Tax Exempt' */
    taxRate: string;
    /** Xero's AccountCode of each ledger account (the rounding account too), by the account's name. @default {} */
    accountCodes: Readonly<Record<string, string>>;
  };
}

export const DEFAULT_LEDGER_SETTINGS: Readonly<LedgerSettings> = Object.freeze({
  minorUnit: null,
  roundingAccount: 'Rounding differences',
  dateFormat: 'MM/DD/YYYY',
  xero: Object.freeze({ taxRate: 'Tax Exempt', accountCodes: Object.freeze({}) }),
});

/** What every file of an export shares. */
export interface LedgerFileContext {
  /** The currency of the amounts (the reporting currency). */
  currency: string;
  /** Decimals the amounts are rounded to. */
  minorUnit: number;
  settings: LedgerSettings;
  /** Every ledger account the entries post to, the rounding account included, sorted. */
  accounts: readonly string[];
  /** What the file holds, e.g. `Journal entries 2026-10`. */
  title: string;
}

/** One ledger's import layout. */
export interface LedgerLayout {
  format: LedgerFormat;
  /** The ledger and its import, in words. */
  title: string;
  /**
   * The file's name beside the workbook `<base>.xlsx`; `part`: the number of the file (from 1),
   * for a layout of `maxLinesPerFile`, else undefined.
   */
  fileName(base: string, part: number | undefined): string;
  /** Lines (rows after the header) per file: an entry is never split, a file ends before the entry that would pass it. @default no limit */
  maxLinesPerFile?: number;
  /**
   * Refuses, before anything is written, what the import would refuse for the whole file: more
   * decimals than it reads, an account it cannot name. Throws a ConfigError or DataError.
   */
  check(context: LedgerFileContext): void;
  /** The text a file starts with (a header row, a journal's directives). */
  head(context: LedgerFileContext): string;
  /** The lines (rows) an entry takes in the file. */
  lineCount(entry: RoundedEntry): number;
  /**
   * An entry's text. `ordinal`: its number among the entries written for its day (from 1), for a
   * ledger that wants a short journal number.
   */
  entry(entry: RoundedEntry, ordinal: number, context: LedgerFileContext): string;
}

/** RFC 4180 rows, CRLF: what the CSV imports read. */
function csvRows(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => `${row.map(csvField).join(',')}\r\n`).join('');
}

/** An amount of minor units, unsigned, with the currency's decimals (`1234.50`): no exponent, no thousands separator. */
function plainAmount(units: bigint, minorUnit: number): string {
  return unitsText(units < 0n ? -units : units, minorUnit);
}

/** `2026-10-05` as the format asks. */
function dateText(date: string, format: LedgerDateFormat): string {
  const [year, month, day] = date.split('-');
  return format === 'MM/DD/YYYY' ? `${month}/${day}/${year}` : `${day}/${month}/${year}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** What a line is, for the ledgers' description columns: its memo, or what the rounding line posts. */
function lineText(line: RoundedLine, context: LedgerFileContext): string {
  if (line.isRounding) return `Rounding difference of the entry to ${unitsText(1n, context.minorUnit)} ${context.currency}`;
  return line.memo ?? '';
}

/** The imports that read at most two decimals (their amount fields are money of two decimals). */
function checkTwoDecimals(ledger: string, context: LedgerFileContext): void {
  if (context.minorUnit > 2) {
    throw new ConfigError('reports.ledger.minorUnit', `is ${context.minorUnit} (${context.currency}): ${ledger} imports amounts of at most 2 decimals`, {
      hint: `set reports.ledger.minorUnit to 2 (or fewer) for this import, or write the hledger journal, which takes any`,
    });
  }
}

/**
 * QuickBooks Online, Import data > Journal entries (Intuit's "Import journal entries"): Journal
 * No., Journal Date, Account Name, Description, Debits, Credits, Name; account numbers turned off,
 * so accounts are named, a sub-account as `Parent:Sub` (the chart's `Digital assets:{coin}` is
 * one); the other side of a line empty; dates as the company's date format.
 */
const QUICKBOOKS: LedgerLayout = {
  format: 'quickbooks',
  title: 'QuickBooks Online journal entries',
  fileName: (base) => `${base}.quickbooks.csv`,
  check: (context) => checkTwoDecimals('QuickBooks Online', context),
  head: () => csvRows([['Journal No', 'Journal Date', 'Account Name', 'Description', 'Debits', 'Credits', 'Name']]),
  lineCount: (entry) => entry.lines.length,
  entry(entry, ordinal, context) {
    // Journal No. is short in QuickBooks (21 characters): the day and the entry's number in it.
    // The entry's id, the way back to its source, is in each line's Description.
    const number = `${entry.date.replaceAll('-', '')}-${String(ordinal).padStart(3, '0')}`;
    const date = dateText(entry.date, context.settings.dateFormat);
    return csvRows(
      entry.lines.map((line) => {
        const amount = plainAmount(line.amount, context.minorUnit);
        return [number, date, line.account, `${lineText(line, context)} (${entry.id})`, line.amount > 0n ? amount : '', line.amount < 0n ? amount : '', ''];
      }),
    );
  },
};

/**
 * Xero, Manual journals > Import (Xero's "Import manual journals"): the template's columns, its
 * mandatory ones marked `*`; one narration and date per journal (the entry's id: rows with the
 * same narration and date are one journal); AccountCode the code of the chart of accounts (not the
 * name); TaxRate a tax rate's full name; Amount positive for a debit, negative for a credit; dates
 * `dd mmm yyyy`, which Xero reads alike in every region; at most 300 lines per file.
 */
const XERO: LedgerLayout = {
  format: 'xero',
  title: 'Xero manual journals',
  fileName: (base, part) => `${base}.xero-${part ?? 1}.csv`,
  maxLinesPerFile: 300,
  check(context) {
    checkTwoDecimals('Xero', context);
    const missing = context.accounts.filter((account) => context.settings.xero.accountCodes[account] === undefined);
    if (missing.length > 0) {
      throw new ConfigError('reports.ledger.xero.accountCodes', `has no code for ${missing.map((account) => `"${account}"`).join(', ')}: Xero imports an account by its code (e.g. 200), not its name`, {
        hint: `add each to reports.ledger.xero.accountCodes, e.g. { ${missing
          .slice(0, 2)
          .map((account, index) => `${JSON.stringify(account)}: "${String(index + 1)}00"`)
          .join(', ')} }, with the codes of your Xero chart of accounts`,
      });
    }
  },
  head: () => csvRows([['*Narration', '*Date', 'Description', '*AccountCode', '*TaxRate', '*Amount', 'TrackingName1', 'TrackingOption1', 'TrackingName2', 'TrackingOption2']]),
  lineCount: (entry) => entry.lines.length,
  entry(entry, _ordinal, context) {
    const [year, month, day] = entry.date.split('-');
    const date = `${day} ${MONTHS[Number(month) - 1]} ${year}`;
    return csvRows(entry.lines.map((line) => [entry.id, date, lineText(line, context), context.settings.xero.accountCodes[line.account]!, context.settings.xero.taxRate, unitsText(line.amount, context.minorUnit), '', '', '', '']));
  },
};

/** NetSuite's Debit and Credit: at most 10 digits before the decimal point. */
const NETSUITE_LIMIT_DIGITS = 10;

/**
 * NetSuite, Transactions > Financial > Make Journal Entries > Import (Oracle's "Journal Entry and
 * Intercompany Journal Entry Line-Level Fields Table"): an entry per External ID (the entry's id:
 * importing the file again finds the same records), at least two lines whose debits and credits
 * balance, Debit and Credit numbers of at most 10 digits before the decimal point and 2 after,
 * accounts by name (the Use Account Numbers preference off), dates as the user's date preference.
 */
const NETSUITE: LedgerLayout = {
  format: 'netsuite',
  title: 'NetSuite journal entries',
  fileName: (base) => `${base}.netsuite.csv`,
  check: (context) => checkTwoDecimals('NetSuite', context),
  head: () => csvRows([['External ID', 'Date', 'Account', 'Debit', 'Credit', 'Memo']]),
  lineCount: (entry) => entry.lines.length,
  entry(entry, _ordinal, context) {
    const date = dateText(entry.date, context.settings.dateFormat);
    return csvRows(
      entry.lines.map((line) => {
        const amount = plainAmount(line.amount, context.minorUnit);
        if (amount.split('.')[0]!.length > NETSUITE_LIMIT_DIGITS) {
          throw new DataError(`journal entry ${entry.id}: ${amount} ${context.currency} on "${line.account}" has more than ${NETSUITE_LIMIT_DIGITS} digits before the decimal point, more than a NetSuite journal import takes`, {
            hint: 'post this entry in NetSuite by hand (or write the other formats without netsuite); the workbook and the other files hold it',
          });
        }
        return [entry.id, date, line.account, line.amount > 0n ? amount : '', line.amount < 0n ? amount : '', lineText(line, context)];
      }),
    );
  },
};

/** hledger's commodity symbol: letters as they are, anything else double-quoted. */
function commoditySymbol(currency: string): string {
  return /^[A-Za-z]+$/.test(currency) ? currency : `"${currency}"`;
}

/** hledger reads a transaction's description up to a `;` (a comment) and a posting's account up to two spaces or a tab. */
function hledgerText(text: string): string {
  return text.replaceAll(';', ',').replace(/[\r\n\t]+/g, ' ');
}

/**
 * hledger (and Ledger) plain-text journal (hledger's manual, "Journal format"): a transaction per
 * entry, dated, its id as the code in parentheses and its memo as the description; a posting per
 * line with its amount and commodity written out, so each transaction balances exactly as written;
 * the accounts and the commodity declared first, so `hledger check --strict` passes too.
 */
const HLEDGER: LedgerLayout = {
  format: 'hledger',
  title: 'hledger journal',
  fileName: (base) => `${base}.journal`,
  check(context) {
    for (const account of context.accounts) {
      // Two spaces end an account name in a posting; ( and [ begin virtual postings.
      if (/ {2}|\t/.test(account) || /^[([]/.test(account) || account !== account.trim()) {
        const key = account === context.settings.roundingAccount ? 'reports.ledger.roundingAccount' : 'models.journal.accounts';
        throw new ConfigError(key, `"${account}" cannot be an hledger account: two spaces in a row or a tab end its name, ( or [ at its start make a virtual posting`, {
          hint: 'rename it with single spaces (and no leading bracket), then exledger build (for models.journal.accounts) and the report again',
        });
      }
    }
  },
  head(context) {
    // The decimal mark is always written (`1000.` for none): hledger refuses a commodity directive without one.
    const sample = `1000.${'0'.repeat(context.minorUnit)}`;
    return [
      `; ${context.title}, written by exledger: amounts rounded to ${unitsText(1n, context.minorUnit)} ${context.currency}; each entry's rounding difference is posted to "${context.settings.roundingAccount}"`,
      'decimal-mark .',
      `commodity ${sample} ${commoditySymbol(context.currency)}`,
      ...context.accounts.map((account) => `account ${account}`),
      '',
      '',
    ].join('\n');
  },
  lineCount: (entry) => entry.lines.length,
  entry(entry, _ordinal, context) {
    // The accounts padded to the longest, so the amounts line up.
    const width = Math.max(...context.accounts.map((account) => account.length));
    const description = hledgerText(entry.lines.find((line) => !line.isRounding)?.memo ?? entry.id);
    const postings = entry.lines.map((line) => {
      const amount = `${unitsText(line.amount, context.minorUnit)} ${commoditySymbol(context.currency)}`;
      const memo = line.isRounding ? lineText(line, context) : line.memo !== null && hledgerText(line.memo) !== description ? hledgerText(line.memo) : '';
      return `    ${line.account.padEnd(width)}  ${amount.padStart(20)}${memo === '' ? '' : `  ; ${memo}`}`;
    });
    return [`${entry.date} (${entry.id.replaceAll(')', ']')}) ${description}`, ...postings, ''].join('\n') + '\n';
  },
};

/** Every layout, by its format name. */
export const LEDGER_LAYOUTS: Readonly<Record<LedgerFormat, LedgerLayout>> = { quickbooks: QUICKBOOKS, xero: XERO, netsuite: NETSUITE, hledger: HLEDGER };
