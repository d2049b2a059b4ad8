/** How one step of a job ended (after kysely's migrator: a result per step, not a throw halfway). */
export type StepStatus = 'ok' | 'partial' | 'failed' | 'skipped' | 'interrupted';

/** The steps of the nightly run, in order. */
export type StepName = 'sync' | 'archive' | 'build' | 'check' | 'reports' | 'publish';

/** The steps of the nightly run, in the order they run. */
export const STEP_ORDER: readonly StepName[] = ['sync', 'archive', 'build', 'check', 'reports', 'publish'];

/** One step of a run and how it ended. */
export interface StepResult {
  step: StepName;
  status: StepStatus;
  /** One line: what it did, or why it failed or was skipped. */
  detail: string;
  ms: number;
}
