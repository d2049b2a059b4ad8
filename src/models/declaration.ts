import { z } from 'zod';
import { ConfigError } from '../errors.ts';
import { columnComment, sqlString } from '../store/comments.ts';

/**
 * What a model declaration says (after dbt's schema files): one typed literal per layer, in
 * sql/<layer>/_models.ts, beside the SQL it describes. The runner validates it at start-up,
 * fails a build whose columns disagree with it, writes its descriptions as DuckDB comments, and
 * generates its generic tests (unique key, not null, accepted values, relationships) for
 * `exledger check`.
 */

const NAME = /^[a-z_][a-z0-9_]*$/;
const identifier = z.string().regex(NAME, 'a snake_case name');
const oneLine = z.string().trim().min(1).refine((text) => !text.includes('\n'), 'one line');

const columnSchema = z
  .object({
    /** The column's name, as the model's SQL gives it. */
    name: identifier,
    /** One line: what it holds. */
    description: oneLine,
    /**
     * Its unit, where it has one: for an amount the column holding its coin (`coin: fee_coin`,
     * or `quote coin: quote_coin`), for a date or month the zone it is cut in (`reporting zone`,
     * `UTC day`), for an instant `UTC`.
     */
    unit: oneLine.optional(),
    /** Generic test: no row has it NULL. @default false */
    notNull: z.boolean().optional(),
    /** Generic test: every non-NULL value is one of these. */
    acceptedValues: z.array(z.union([z.string(), z.number()])).min(1).optional(),
    /** Generic test: every non-NULL value is found in that column of that model (`<layer>.<name>`). */
    relationship: z.object({ model: z.string().regex(/^(staging|intermediate|marts)\.[a-z_][a-z0-9_]*$/), column: identifier }).strict().optional(),
  })
  .strict();

const modelSchema = z
  .object({
    /** The model's name (its file name in the layer, without `.sql`). */
    name: identifier,
    /** One line: what the model is. */
    description: oneLine,
    /** What one row is. */
    grain: oneLine,
    /** The columns that identify a row (generic test: unique, NULLs equal to each other). */
    key: z.array(identifier).min(1),
    /** Every column the model builds, in its order. */
    columns: z.array(columnSchema).min(1),
    /**
     * Labels to select it by (`exledger build --select tag:fees`): what it is about (`spot`,
     * `futures`, `fees`, `balances`, `affiliate`, `prices`) and `report` for a mart a workbook reads. @default []
     */
    tags: z
      .array(identifier)
      .refine((tags) => new Set(tags).size === tags.length, 'a tag is given twice')
      .optional(),
    /**
     * Where the build's change records (settings.model_changes) place its rows, for the
     * incremental check (`exledger check --changed`, src/models/check-scope.ts): the column a
     * change's account names (the pool, for the spot intermediate models), the one its symbol
     * names, and the instant (`at`) or reporting-zone date (`date`; `cut: month` for a table of
     * months) compared with the change's from_at. Each must follow from the key (a fill's id
     * gives its symbol and time, a sell's number its instant), so that two rows of one key lie
     * in the same place. Its generic tests then read the changed rows: not_null, accepted_values
     * and unique (a duplicate of a changed row is a changed row too; one whose place disagrees
     * with its key is the full check's); relationships stay whole (a parent row gone is not a
     * changed row of the child). @default none: its generic tests run whole when it changed
     */
    changes: z
      .object({
        account: identifier.optional(),
        symbol: identifier.optional(),
        at: identifier.optional(),
        date: identifier.optional(),
        cut: z.enum(['row', 'day', 'month']).optional(),
      })
      .strict()
      .refine((changes) => changes.at === undefined || changes.date === undefined, 'changes: give at (an instant) or date (a day), not both')
      .optional(),
    /**
     * What a whole rebuild for what the model reads (its SQL and settings as before) tells the
     * models that read it: everything (the default), or `changed rows`: the rows that differ from
     * before, placed by its `changes` (which must name the account), so that a reader that follows
     * the night is not rebuilt whole for it. For a table of a few rows (a month per account and
     * coin): the build compares every row with the one before. @default everything
     */
    handOn: z.enum(['changed rows']).optional(),
    /**
     * Whether the model's incremental step reads and hands on bounded changes: pending rows whose
     * to_at is set say that only its rows from from_at to to_at changed (uk's replay of a sell of
     * the 30 days before the night: that sell's segments, not every one since). Only a model whose
     * rows each depend on the input rows of their own instant may say so (a sell's matches on that
     * sell's segments); one that carries running sums forward must not (a changed day changes every
     * day after it), and reads such a change as from its from_at on, as every model without it
     * does. Its step must give to_at in temp.main.model_pending (NULL: every time from from_at on).
     * @default false
     */
    changeRanges: z.literal(true).optional(),
    /**
     * How a mart is closed (docs/workbooks.md "Closing a period"): its rows up to a closed
     * period's end are frozen in `closed.<name>`, and a later difference between its live rows
     * and the frozen ones is a prior-period adjustment (marts.period_adjustments), per key and
     * measure. Or `notFrozen`: why the mart has no figure a close freezes. Marts only.
     */
    closing: z
      .union([
        z
          .object({
            /** The DATE column that places a row in a period (a day, or a month's first day). */
            period: identifier,
            /** The additive figures (flows and counts) whose difference is an adjustment: never a balance or a price. */
            measures: z.array(identifier).min(1),
            /** What identifies a figure, besides the period and `account`. @default the model's key without them */
            key: z.array(identifier).optional(),
            /** Where its live rows are read from, when not from the mart itself (the journal: its computed lines). @default the mart */
            live: z.string().regex(/^(intermediate|marts)\.[a-z_][a-z0-9_]*$/).optional(),
          })
          .strict(),
        z.object({ notFrozen: oneLine }).strict(),
      ])
      .optional(),
  })
  .strict()
  .superRefine((model, context) => {
    const names = model.columns.map((column) => column.name);
    const duplicate = names.find((name, index) => names.indexOf(name) !== index);
    if (duplicate !== undefined) context.addIssue({ code: 'custom', message: `column ${duplicate} is declared twice` });
    for (const key of model.key) if (!names.includes(key)) context.addIssue({ code: 'custom', message: `key column ${key} is not a declared column` });
    const { cut: _, ...changed } = model.changes ?? {};
    for (const column of Object.values(changed)) if (!names.includes(column)) context.addIssue({ code: 'custom', message: `changes: ${column} is not a declared column` });
    if (model.handOn === 'changed rows' && model.changes?.account === undefined) context.addIssue({ code: 'custom', message: "handOn 'changed rows' needs changes naming the account column" });
    if (model.changeRanges === true && model.changes?.at === undefined) context.addIssue({ code: 'custom', message: 'changeRanges needs changes naming the instant column (at)' });
    if (model.closing !== undefined && 'period' in model.closing) {
      const { period, measures, key = [] } = model.closing;
      for (const column of [period, ...measures, ...key]) if (!names.includes(column)) context.addIssue({ code: 'custom', message: `closing: ${column} is not a declared column` });
      for (const measure of measures) if (model.key.includes(measure) || key.includes(measure) || measure === period) context.addIssue({ code: 'custom', message: `closing: ${measure} is a key or the period, not a measure` });
    }
  });

/** How a mart is closed: its period column, measures and key (ModelDeclaration.closing). */
export interface ClosingSpec {
  /** The mart, `marts.<name>`. */
  mart: string;
  period: string;
  measures: readonly string[];
  /** Key columns besides `account` and the period. */
  key: readonly string[];
  /** Where its live rows are read from. */
  live: string;
  /** Each measure's coin column (its unit `coin: <column>`), or null. */
  coinColumns: ReadonlyMap<string, string | null>;
}

/** The closing spec of a declared mart, or undefined when it is not frozen at a close. */
export function closingSpec(id: string, declaration: ModelDeclaration): ClosingSpec | undefined {
  const closing = declaration.closing;
  if (closing === undefined || !('period' in closing)) return undefined;
  const key = closing.key ?? declaration.key.filter((column) => column !== 'account' && column !== closing.period);
  const coinColumns = new Map(
    closing.measures.map((measure) => {
      const unit = declaration.columns.find((column) => column.name === measure)?.unit ?? '';
      const coin = /^coin: ([a-z_][a-z0-9_]*)$/.exec(unit)?.[1];
      return [measure, coin !== undefined && declaration.columns.some((column) => column.name === coin) ? coin : null] as const;
    }),
  );
  return { mart: id, period: closing.period, measures: closing.measures, key: key.filter((column) => column !== 'account'), live: closing.live ?? id, coinColumns };
}

export type ColumnDeclaration = z.infer<typeof columnSchema>;
export type ModelDeclaration = z.infer<typeof modelSchema>;

/** The declarations of one layer's models. */
export interface LayerDeclaration {
  layer: 'staging' | 'intermediate' | 'marts';
  models: readonly ModelDeclaration[];
}

/** Declares a layer's models (the export of sql/<layer>/_models.ts); validated when loaded. */
export function declareModels(layer: LayerDeclaration['layer'], models: readonly ModelDeclaration[]): LayerDeclaration {
  return { layer, models };
}

/**
 * Validates the declarations against the models found in the SQL files: each declared model has
 * a file, each relationship points to a model that exists (and to a declared column of it, when
 * that model is declared). Returns them by model id (`<layer>.<name>`).
 * @throws ConfigError naming the declaration file and what to fix.
 */
export function validateDeclarations(layers: readonly LayerDeclaration[], modelIds: ReadonlySet<string>, source: (layer: string) => string): Map<string, ModelDeclaration> {
  const byId = new Map<string, ModelDeclaration>();
  for (const { layer, models } of layers) {
    const parsed = z.array(modelSchema).safeParse(models);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.length > 0 ? `${issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')}: ` : '';
      const model = typeof issue.path[0] === 'number' ? models[issue.path[0]]?.name : undefined;
      throw new ConfigError(source(layer), `${model === undefined ? '' : `model ${model}: `}${where}${issue.message}`);
    }
    for (const model of parsed.data) {
      const id = `${layer}.${model.name}`;
      if (byId.has(id)) throw new ConfigError(source(layer), `model ${model.name} is declared twice`);
      if (!modelIds.has(id)) throw new ConfigError(source(layer), `declares ${model.name}, which no file sql/${layer}/${model.name}.sql defines`);
      byId.set(id, model);
    }
  }
  for (const [id, model] of byId) {
    for (const column of model.columns) {
      const target = column.relationship;
      if (target === undefined) continue;
      const where = `model ${model.name}, column ${column.name}: relationship to ${target.model}.${target.column}`;
      if (!modelIds.has(target.model)) throw new ConfigError(source(id.split('.')[0]!), `${where}: no such model`);
      const declared = byId.get(target.model);
      if (declared !== undefined && !declared.columns.some((candidate) => candidate.name === target.column)) throw new ConfigError(source(id.split('.')[0]!), `${where}: no such declared column`);
    }
  }
  return byId;
}

/** A generic test generated from a declaration: a query returning the offending rows. */
export interface GenericTest {
  /** `<layer>/<model>_<test>` (`_unique`, `_not_null`, `_accepted_values_<column>`, `_relationships_<column>`). */
  id: string;
  sql: string;
  references: readonly string[];
}

/** The generic tests of one declared model (`id` = `<layer>.<name>`). */
export function genericTests(id: string, model: ModelDeclaration): GenericTest[] {
  const [layer] = id.split('.') as [string];
  const prefix = `${layer}/${model.name}`;
  const keys = model.key.join(', ');
  const notNull = model.columns.filter((column) => column.notNull === true).map((column) => column.name);
  // Where the model declares how its changes place its rows, a test of what changed reads those
  // (src/models/check-scope.ts): a condition on its rows. The columns that place a row follow from its
  // key (ModelDeclaration.changes): two rows of one key lie in the same place, so a duplicate of a
  // changed row is a changed row too.
  const { cut, ...changes } = model.changes ?? {};
  const placing = Object.entries(changes).map(([name, column]) => `${name}: ${column}`);
  if (cut !== undefined) placing.push(`cut: ${cut}`);
  const where = (condition: string) => (model.changes === undefined ? condition : `{{ changed(${placing.join(', ')}) }} and ${condition}`);
  const unique = model.changes === undefined ? `from ${id}` : `from ${id}\nwhere {{ changed(${placing.join(', ')}) }}`;
  const tests: GenericTest[] = [{ id: `${prefix}_unique`, sql: `select ${keys}, count(*) as n\n${unique}\ngroup by ${keys}\nhaving count(*) > 1`, references: [id] }];
  if (notNull.length > 0) {
    const nullList = `list_filter([${notNull.map((name) => `case when ${name} is null then '${name}' end`).join(', ')}], (name) -> name is not null)`;
    tests.push({ id: `${prefix}_not_null`, sql: `select ${nullList} as null_columns, ${keys}\nfrom ${id}\nwhere ${where(`(${notNull.map((name) => `${name} is null`).join(' or ')})`)}`, references: [id] });
  }
  for (const column of model.columns) {
    if (column.acceptedValues !== undefined) {
      const values = column.acceptedValues.map((value) => (typeof value === 'number' ? String(value) : sqlString(value))).join(', ');
      tests.push({ id: `${prefix}_accepted_values_${column.name}`, sql: `select ${column.name}, count(*) as n\nfrom ${id}\nwhere ${where(`${column.name} not in (${values})`)}\ngroup by ${column.name}`, references: [id] });
    }
    if (column.relationship !== undefined) {
      const { model: parent, column: parentColumn } = column.relationship;
      tests.push({
        id: `${prefix}_relationships_${column.name}`,
        sql: `select ${column.name}, count(*) as n\nfrom ${id} as child\nwhere ${column.name} is not null\n  and not exists (select 1 from ${parent} as parent where parent.${parentColumn} = child.${column.name})\ngroup by ${column.name}`,
        references: [id, parent],
      });
    }
  }
  return tests;
}

/**
 * The statements that write a declared model's descriptions as DuckDB comments (shown by
 * duckdb_tables(), duckdb_views() and duckdb_columns()). CREATE OR REPLACE drops them, so they
 * are written after every build of the model, in its transaction.
 */
export function commentStatements(id: string, kind: 'view' | 'table', model: ModelDeclaration): string[] {
  return [
    `COMMENT ON ${kind === 'view' ? 'VIEW' : 'TABLE'} ${id} IS ${sqlString(`${model.description} Grain: ${model.grain}. Key: (${model.key.join(', ')}).`)}`,
    ...model.columns.map((column) => `COMMENT ON COLUMN ${id}.${column.name} IS ${sqlString(columnComment(column))}`),
  ];
}

/**
 * What differs between the columns a model built and those declared: empty when they agree,
 * otherwise one line naming the missing and the undeclared columns.
 */
export function columnDisagreement(built: readonly string[], model: ModelDeclaration): string | undefined {
  const declared = model.columns.map((column) => column.name);
  const missing = declared.filter((name) => !built.includes(name));
  const extra = built.filter((name) => !declared.includes(name));
  if (missing.length === 0 && extra.length === 0) return undefined;
  return [
    'its columns disagree with its declaration',
    ...(missing.length > 0 ? [`declared but not built: ${missing.join(', ')}`] : []),
    ...(extra.length > 0 ? [`built but not declared: ${extra.join(', ')}`] : []),
  ].join('; ');
}

