import type ExcelJS from 'exceljs';
import type { ReportPeriod } from './period.ts';

/**
 * How every sheet of a workbook prints: A4 landscape, as wide as the page and as many pages down
 * as needed, narrow side margins (a wide table loses less to the fit), the header rows repeated
 * on each page, a header naming the report and its period and a footer naming the sheet and the
 * page ("page 2 of 5"), so a printed or PDF page is never anonymous once it leaves the pile.
 * xlsx-writer.ts applies it to every sheet the workbook adds, whoever adds it.
 */

/** What a workbook's sheets print with. */
export interface PrintSetup {
  pageSetup: Partial<ExcelJS.PageSetup>;
  headerFooter: Partial<ExcelJS.HeaderFooter>;
}

/** A4 (Excel's paper size 9), landscape, one page wide and as many down as needed (0: no limit). */
export const PRINT_PAGE_SETUP: Partial<ExcelJS.PageSetup> = {
  orientation: 'landscape',
  paperSize: 9,
  fitToPage: true,
  fitToWidth: 1,
  fitToHeight: 0,
  // Inches. Top and bottom leave room for the header and footer lines (0.3 in from the edge).
  margins: { left: 0.4, right: 0.4, top: 0.75, bottom: 0.75, header: 0.3, footer: 0.3 },
};

/** Text inside an Excel header or footer, where `&` starts a code: a literal one is doubled. */
export function headerFooterText(text: string): string {
  return text.replace(/&/g, '&&');
}

/**
 * The header and footer of a report's sheets, in Excel's codes (ECMA-376 Part 1, 18.3.1.46):
 * `&L`, `&C`, `&R` start the left, centre and right sections, `&A` is the sheet's name, `&P` the
 * page number and `&N` the number of pages. Excel caps each at 255 characters.
 */
export function reportHeaderFooter(report: { name: string; title: string }, period: ReportPeriod, account?: string, closure?: string): Partial<ExcelJS.HeaderFooter> {
  // A page of one account's workbook (--account) says whose it is: printed pages get separated.
  const left = headerFooterText(`${report.title} (${report.name})${account === undefined ? '' : `, account ${account}`}`).slice(0, 110);
  // Closed or a draft: a signed page says so on its own.
  const centre = closure === undefined ? '' : `&C${headerFooterText(closure).slice(0, 80)}`;
  const right = headerFooterText(`Period ${period.label}: ${period.from} to ${period.to}`);
  return {
    oddHeader: `&L${left}${centre}&R${right}`,
    oddFooter: '&L&A&RPage &P of &N',
  };
}

/** The print setup of a report's workbook. */
export function reportPrintSetup(report: { name: string; title: string }, period: ReportPeriod, account?: string, closure?: string): PrintSetup {
  return { pageSetup: PRINT_PAGE_SETUP, headerFooter: reportHeaderFooter(report, period, account, closure) };
}

/**
 * A sheet's page setup under the workbook's: the workbook's paper, orientation, fit and margins
 * win (every sheet prints alike); the sheet keeps its own print titles and print area. Rows
 * frozen at the top of the sheet (its header) are repeated on every page unless it names others:
 * what stays on screen while scrolling stays on paper.
 */
export function sheetPageSetup(
  workbook: Partial<ExcelJS.PageSetup>,
  sheet: { pageSetup?: Partial<ExcelJS.PageSetup>; views?: Partial<ExcelJS.WorksheetView>[] },
): Partial<ExcelJS.PageSetup> {
  const frozen = sheet.views?.find((view) => view.state === 'frozen') as Partial<ExcelJS.WorksheetViewFrozen> | undefined;
  const frozenRows = frozen?.ySplit ?? 0;
  const titles = sheet.pageSetup?.printTitlesRow ?? (frozenRows > 0 ? `1:${frozenRows}` : undefined);
  return { ...sheet.pageSetup, ...workbook, ...(titles === undefined ? {} : { printTitlesRow: titles }) };
}
