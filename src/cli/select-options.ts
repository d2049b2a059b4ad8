import type { Argv } from 'yargs';
import { splitSelectors, type ModelSelection } from '../models/select.ts';

/** Adds `--select` and `--exclude` (dbt's node selection, src/models/select.ts). */
export function withSelectOptions<T>(yargs: Argv<T>, what: string) {
  return yargs
    .option('select', {
      alias: 's',
      type: 'string',
      array: true,
      describe: `${what}: model (fees_monthly or marts.fees_monthly), +model (and its ancestors), model+ (and its descendants), +model+, layer:staging|intermediate|marts, tag:<tag>; several (space-separated or repeated) are a union [default: every model]`,
    })
    .option('exclude', { type: 'string', array: true, describe: 'Models to leave out, in the same forms as --select' });
}

/** The selection flags as a model selection (each value may hold several selectors, space-separated). */
export function selectionOf(args: { select?: (string | number)[]; exclude?: (string | number)[] }): ModelSelection {
  return { select: splitSelectors(args.select), exclude: splitSelectors(args.exclude) };
}
