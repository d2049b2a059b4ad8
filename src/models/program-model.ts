import type { Database } from '../store/database.ts';

/**
 * A model computed in TypeScript (as dbt has Python models), for logic that is stateful and has
 * no sound set-based SQL form (a stack of lots, a heap, a pool with a look-ahead). It lives beside
 * the SQL models as sql/<layer>/<name>.ts, is ordered, selected, declared, checked and recorded in
 * settings.model_builds like them, and its table is replaced in the same transaction.
 */
export interface ProgramModel {
  /** Its name: the file sql/<layer>/<name>.ts and the table <layer>.<name>. */
  name: string;
  layer: 'intermediate' | 'marts';
  /** The models it reads (`<layer>.<name>`), as an SQL model's references. */
  references: readonly string[];
  /** The table's columns, as in CREATE TABLE (`account VARCHAR NOT NULL, …`), in the declared order. */
  columns: string;
  /**
   * Fills the new, empty table `<layer>.<name>` inside the build's transaction: read upstream
   * tables with db.streamCommitted (they were committed by earlier models), write with db.appender.
   */
  build(db: Database): Promise<void>;
  /**
   * Brings the existing table up to date inside the build's transaction, from the changes listed
   * in `temp.main.model_pending` (docs/plans/incremental-builds.md, "The contract"): it must leave
   * the table equal to what build() would, and may widen the pending rows passed on. Without it,
   * the model is rebuilt whole whenever its inputs changed.
   */
  incremental?(db: Database): Promise<void>;
}

/** Declares a model computed in TypeScript (the default export of sql/<layer>/<name>.ts). */
export function declareProgramModel(model: ProgramModel): ProgramModel {
  return model;
}
