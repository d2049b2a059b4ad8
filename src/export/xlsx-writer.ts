import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import type ExcelJS from 'exceljs';
import { sheetPageSetup, type PrintSetup } from './print-setup.ts';

/**
 * exceljs's streaming workbook writer, plus the two parts of a workbook it cannot stream: Excel
 * tables (exceljs issue #1412) and pictures (issue #322). Big sheets must be streamed so memory
 * stays flat, and a finance team expects tables (filters, banding, a totals row) and a chart.
 *
 * Both are small XML parts beside the sheet: a table is `xl/tables/tableN.xml`, linked from the
 * sheet's relationships and listed at the end of the sheet (`<tableParts>`); a picture is a
 * drawing part (`xl/drawings/drawingN.xml`) that points at the image in `xl/media/`, linked the
 * same way (`<drawing>`). The writer's own hooks add them: `_openStream` for a part, the sheet's
 * relationship writer for the link, and the content types model, which already renders `tables`
 * and `drawings` (exceljs uses it for the non-streaming writer). exceljs is pinned in
 * package.json; test/export-xlsx-writer.test.ts reads the result back.
 *
 * Printing: exceljs writes a sheet's page setup, its header and footer, and the print titles (a
 * `_xlnm.Print_Titles` defined name in the workbook part) from the options of `addWorksheet`, but
 * only for the sheets that are given them. `printSetup` is given to every sheet here, whoever adds
 * it (print-setup.ts says what it is); test/export-summary-print.test.ts reads the XML back.
 */

/** A table over a block of a sheet whose first row holds the headers. */
export interface TableSpec {
  /** Unique in the workbook; letters, digits and `_`, starting with a letter. */
  name: string;
  /** 1-based row of the headers. */
  headerRow: number;
  /** 1-based first column. @default 1 */
  firstColumn?: number;
  /** Number of data rows (at least 1: Excel refuses an empty table). */
  dataRows: number;
  /** Header texts, exactly as written in the header row (Excel checks they match). */
  columns: readonly { name: string; /** The totals row sums this column. */ total?: boolean }[];
  /** A totals row follows the data (its cells are written by the caller). @default false */
  totalsRow?: boolean;
  /** Label written in the first column of the totals row. @default 'Total' */
  totalsLabel?: string;
  /** @default 'TableStyleMedium2' */
  style?: string;
}

/** A PNG placed on a sheet at a cell, at its own size. */
export interface PictureSpec {
  png: Buffer;
  /** 0-based column and row of the top-left corner. */
  col: number;
  row: number;
  widthPx: number;
  heightPx: number;
  /** Shown to screen readers. */
  description: string;
}

interface WorksheetInternals {
  id: number;
  _writeCloseWorksheet(): void;
  _write(text: string): void;
  _sheetRelsWriter: { addRelationship(rel: { Type: string; Target: string }): string };
}

interface WorkbookInternals {
  _openStream(path: string): NodeJS.WritableStream & { end(): void };
  zip: { append(source: string | Buffer, options: { name: string }): void };
  _worksheets: unknown[];
  sharedStrings: unknown;
  commentRefs: unknown[];
  media: unknown[];
  views: unknown[];
  _definedNames: { model: unknown };
}

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const EMU_PER_PX = 9525;

/** Column letters of a 1-based column number (1 → A, 28 → AB). */
export function columnLetters(column: number): string {
  let letters = '';
  for (let rest = column; rest > 0; rest = Math.floor((rest - 1) / 26)) letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters;
  return letters;
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * A streaming xlsx writer with tables and pictures (createXlsxWriter). Use exceljs's API for sheets
 * and rows (`addWorksheet`, `addRow(...).commit()`), then `addTable`/`addPicture` on a sheet
 * before it is committed, and `commit()` the workbook at the end.
 */
export type XlsxWriter = InstanceType<ReturnType<typeof defineXlsxWriter>>;

let writerClass: ReturnType<typeof defineXlsxWriter> | undefined;

/** A new XlsxWriter into `options.stream` (an opened file: see write-report.ts, which watches it for errors). */
export function createXlsxWriter(options: { stream: Writable; printSetup?: PrintSetup }): XlsxWriter {
  writerClass ??= defineXlsxWriter((requireExceljs('exceljs') as typeof ExcelJS).stream.xlsx.WorkbookWriter);
  return new writerClass(options);
}

/**
 * The writer's class, defined over exceljs's streaming writer when the first workbook is written:
 * exceljs is loaded then, not when the CLI starts (0.3 s of every command's start, 0.8 s on a busy
 * machine, for the commands that write no workbook).
 */
function defineXlsxWriter(WorkbookWriter: typeof ExcelJS.stream.xlsx.WorkbookWriter) {
  return class XlsxWriter extends WorkbookWriter {
    private readonly tables: { target: string }[] = [];
    private readonly drawings: { name: string }[] = [];
    /** Per sheet id: what to add before `</worksheet>`. */
    private readonly sheetTails = new Map<number, { drawing?: string; tables: string[] }>();

    /** How every sheet added from now on prints (print-setup.ts). @default exceljs's (portrait, no header) */
    printSetup: PrintSetup | undefined;

    /**
     * The workbook's custom document properties (docProps/custom.xml: Excel's File > Info >
     * Properties), text by name: what it was written from (report-fingerprint.ts). Set before
     * `commit()`. @default none (the part is written, empty)
     */
    customProperties: Readonly<Record<string, string>> = {};

    /** Writes into `stream` (an opened file: see write-report.ts, which watches it for errors). */
    constructor(options: { stream: Writable; printSetup?: PrintSetup }) {
      super({ stream: options.stream, useStyles: true, useSharedStrings: false });
      this.printSetup = options.printSetup;
      nameEveryFont(this);
    }

    /** exceljs's, with the workbook's print setup (page, header and footer, print titles) on every sheet. */
    override addWorksheet(name?: string, options?: Partial<ExcelJS.AddWorksheetOptions>): ExcelJS.Worksheet {
      if (this.printSetup === undefined) return super.addWorksheet(name, options);
      const pageSetup = sheetPageSetup(this.printSetup.pageSetup, { pageSetup: options?.pageSetup, views: options?.views });
      return super.addWorksheet(name, { ...options, pageSetup, headerFooter: { ...options?.headerFooter, ...this.printSetup.headerFooter } });
    }

    /** Adds a table over rows already written (or to be written) to `sheet`, before the sheet is committed. */
    addTable(sheet: ExcelJS.Worksheet, spec: TableSpec): void {
      if (spec.dataRows < 1) throw new Error(`table ${spec.name}: a table needs at least one data row`);
      const internals = this.sheetInternals(sheet);
      const id = this.tables.length + 1;
      const target = `table${id}.xml`;
      this.tables.push({ target });
      const first = spec.firstColumn ?? 1;
      const last = first + spec.columns.length - 1;
      const lastDataRow = spec.headerRow + spec.dataRows;
      const lastRow = lastDataRow + (spec.totalsRow === true ? 1 : 0);
      const ref = `${columnLetters(first)}${spec.headerRow}:${columnLetters(last)}${lastRow}`;
      const columns = spec.columns
        .map((column, index) => {
          const totals =
            spec.totalsRow !== true ? '' : index === 0 ? ` totalsRowLabel="${escapeXml(spec.totalsLabel ?? 'Total')}"` : column.total === true ? ' totalsRowFunction="sum"' : '';
          return `<tableColumn id="${index + 1}" name="${escapeXml(column.name)}"${totals}/>`;
        })
        .join('');
      const xml =
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
        `<table xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" id="${id}" name="${spec.name}" displayName="${spec.name}" ref="${ref}"` +
        `${spec.totalsRow === true ? ' totalsRowCount="1"' : ' totalsRowShown="0"'}>` +
        `<autoFilter ref="${columnLetters(first)}${spec.headerRow}:${columnLetters(last)}${lastDataRow}"/>` +
        `<tableColumns count="${spec.columns.length}">${columns}</tableColumns>` +
        `<tableStyleInfo name="${spec.style ?? 'TableStyleMedium2'}" showFirstColumn="0" showLastColumn="0" showRowStripes="1" showColumnStripes="0"/>` +
        '</table>';
      this.writePart(`/xl/tables/${target}`, xml);
      const rId = internals._sheetRelsWriter.addRelationship({ Type: `${REL}/table`, Target: `../tables/${target}` });
      this.tailOf(internals).tables.push(rId);
    }

    /** Places a PNG on `sheet` (one picture per sheet), before the sheet is committed. */
    addPicture(sheet: ExcelJS.Worksheet, picture: PictureSpec): void {
      const internals = this.sheetInternals(sheet);
      const tail = this.tailOf(internals);
      if (tail.drawing !== undefined) throw new Error(`sheet ${sheet.name} already has a picture`);
      const imageId = this.addImage({ buffer: picture.png as unknown as ExcelJS.Buffer, extension: 'png' });
      const name = `drawing${this.drawings.length + 1}`;
      this.drawings.push({ name });
      const cx = Math.round(picture.widthPx * EMU_PER_PX);
      const cy = Math.round(picture.heightPx * EMU_PER_PX);
      const xml =
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
        '<xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">' +
        `<xdr:oneCellAnchor><xdr:from><xdr:col>${picture.col}</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>${picture.row}</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from>` +
        `<xdr:ext cx="${cx}" cy="${cy}"/>` +
        `<xdr:pic><xdr:nvPicPr><xdr:cNvPr id="2" name="Picture 1" descr="${escapeXml(picture.description)}"/><xdr:cNvPicPr><a:picLocks noChangeAspect="1"/></xdr:cNvPicPr></xdr:nvPicPr>` +
        `<xdr:blipFill><a:blip xmlns:r="${REL}" r:embed="rId1"/><a:stretch><a:fillRect/></a:stretch></xdr:blipFill>` +
        `<xdr:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="${cx}" cy="${cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></xdr:spPr></xdr:pic>` +
        '<xdr:clientData/></xdr:oneCellAnchor></xdr:wsDr>';
      this.writePart(`/xl/drawings/${name}.xml`, xml);
      this.writePart(
        `/xl/drawings/_rels/${name}.xml.rels`,
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
          '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
          `<Relationship Id="rId1" Type="${REL}/image" Target="../media/image${imageId}.png"/></Relationships>`,
      );
      tail.drawing = internals._sheetRelsWriter.addRelationship({ Type: `${REL}/drawing`, Target: `../drawings/${name}.xml` });
    }

    /**
     * Resolves once the zip has taken in all but `highWaterBytes` of what was written to `sheet`:
     * exceljs's stream buffer writes into the zip entry without backpressure, so a big sheet would
     * otherwise sit whole in memory (~600 bytes a row) and be compressed after its last row. Call
     * it only on the sheet being written while every earlier part has ended (the zip takes its
     * entries in order), as writeReport does, or the wait never ends.
     */
    async drain(sheet: ExcelJS.Worksheet, highWaterBytes = 8 * 1024 ** 2): Promise<void> {
      // archiver's entry stream (readable-stream 2: no writableLength).
      const entry = (sheet as unknown as { _stream?: { pipes: (NodeJS.EventEmitter & { _writableState: { length: number } })[] } })._stream?.pipes[0];
      if (entry !== undefined && entry._writableState.length > highWaterBytes) await once(entry, 'drain');
    }

    /** exceljs's content types, with the tables and drawings this writer added, and the custom properties. */
    override addContentTypes(): Promise<void> {
      const book = this as unknown as WorkbookInternals;
      const model = { worksheets: book._worksheets.filter(Boolean), sharedStrings: book.sharedStrings, commentRefs: book.commentRefs, media: book.media, tables: this.tables, drawings: this.drawings };
      const xml = new (exceljsPart('exceljs/lib/xlsx/xform/core/content-types-xform.js'))().toXml(model).replace('</Types>', `<Override PartName="/${CUSTOM_PART}" ContentType="application/vnd.openxmlformats-officedocument.custom-properties+xml"/></Types>`);
      book.zip.append(xml, { name: '[Content_Types].xml' });
      return Promise.resolve();
    }

    /**
     * exceljs's package relationships (written when the writer is made, before any property is
     * set), with one to the custom properties, which commit() always writes.
     */
    override addOfficeRels(): Promise<void> {
      const book = this as unknown as WorkbookInternals;
      const rels = [
        ['rId1', 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument', 'xl/workbook.xml'],
        ['rId2', 'http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties', 'docProps/core.xml'],
        ['rId3', 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties', 'docProps/app.xml'],
        ['rId4', 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/custom-properties', CUSTOM_PART],
      ];
      const xml =
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        rels.map(([id, type, target]) => `<Relationship Id="${id}" Type="${type}" Target="${target}"/>`).join('') +
        '</Relationships>';
      book.zip.append(xml, { name: '/_rels/.rels' });
      return Promise.resolve();
    }

    /** exceljs's core properties, then the custom ones. */
    override async addCore(): Promise<void> {
      await super.addCore();
      const properties = Object.entries(this.customProperties)
        .map(([name, value], index) => `<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="${index + 2}" name="${escapeXml(name)}"><vt:lpwstr>${escapeXml(value)}</vt:lpwstr></property>`)
        .join('');
      const xml =
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">' +
        `${properties}</Properties>`;
      (this as unknown as WorkbookInternals).zip.append(xml, { name: CUSTOM_PART });
    }

    /**
     * exceljs's workbook part, asking Excel to recalculate on open: the totals are formulas whose
     * cached results we computed; Excel recomputes them from the cells (same numbers).
     */
    override addWorkbook(): Promise<void> {
      const book = this as unknown as WorkbookInternals;
      const model = { worksheets: book._worksheets.filter(Boolean), definedNames: book._definedNames.model, views: book.views, properties: {}, calcProperties: { fullCalcOnLoad: true } };
      const xform = new (exceljsPart('exceljs/lib/xlsx/xform/book/workbook-xform.js'))();
      xform.prepare?.(model);
      book.zip.append(xform.toXml(model), { name: '/xl/workbook.xml' });
      return Promise.resolve();
    }

    private writePart(path: string, xml: string): void {
      const stream = (this as unknown as WorkbookInternals)._openStream(path);
      stream.write(xml);
      stream.end();
    }

    private sheetInternals(sheet: ExcelJS.Worksheet): WorksheetInternals {
      const internals = sheet as unknown as WorksheetInternals & { committed: boolean };
      if (internals.committed) throw new Error(`sheet ${sheet.name} is already committed`);
      return internals;
    }

    /** Hooks the sheet's closing tag once, to list its drawing and tables where the schema wants them (last). */
    private tailOf(internals: WorksheetInternals) {
      let tail = this.sheetTails.get(internals.id);
      if (tail === undefined) {
        const created: { drawing?: string; tables: string[] } = { tables: [] };
        tail = created;
        this.sheetTails.set(internals.id, created);
        const close = internals._writeCloseWorksheet.bind(internals);
        internals._writeCloseWorksheet = () => {
          // CT_Worksheet order: ... drawing, legacyDrawing, ..., tableParts, extLst. exceljs writes
          // no legacy drawing for sheets without comments, and ours have none.
          if (created.drawing !== undefined) internals._write(`<drawing r:id="${created.drawing}"/>`);
          if (created.tables.length > 0) internals._write(`<tableParts count="${created.tables.length}">${created.tables.map((rId) => `<tablePart r:id="${rId}"/>`).join('')}</tableParts>`);
          close();
        };
      }
      return tail;
    }
  };
}

/**
 * A column width as exceljs writes it: it leaves out a column 9 characters wide (its default,
 * `Column.isCustomWidth`), and Excel and LibreOffice then draw their own default, 8.43, which
 * cuts a text measured for 9. Such a column is written 9.01 wide.
 */
export function writtenWidth(width: number): number {
  return width === 9 ? 9.01 : width;
}

/** The one typeface of every workbook: the default font's, so headings and body match. */
export const FONT_NAME = 'Calibri';
/** The default font's size in points. */
export const FONT_SIZE = 11;

/**
 * exceljs writes a font as given: `{ bold: true }` becomes `<font><b/></font>`, without a name or
 * a size, and a reader without Excel's fallback (LibreOffice) draws it in its own default face (a
 * serif) beside the Calibri body. Every font the workbook's styles take in is completed here with
 * the default's name, family and size, whoever styles the cell.
 */
function nameEveryFont(workbook: ExcelJS.stream.xlsx.WorkbookWriter): void {
  const styles = (workbook as unknown as { styles: { _addFont(font: Partial<ExcelJS.Font>): number } }).styles;
  const addFont = styles._addFont.bind(styles);
  styles._addFont = (font) => addFont({ ...font, name: font.name ?? FONT_NAME, family: font.family ?? 2, size: font.size ?? FONT_SIZE });
}

type XformClass = new () => { prepare?(model: unknown): void; toXml(model: unknown): string };

/** exceljs's own renderers of a part (its internal modules; the version is pinned). */
/** The custom document properties part. */
const CUSTOM_PART = 'docProps/custom.xml';

const requireExceljs = createRequire(import.meta.url);
const exceljsPart = (module: string): XformClass => requireExceljs(module) as XformClass;
