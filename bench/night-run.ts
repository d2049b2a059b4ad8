/**
 * The nightly run after its sync, in a process of its own (issue 28, item 1: `exledger run`'s
 * build, check and publish), on a benchmark's database whose night was appended to the raw tables
 * directly (bench/nightly-day.ts) rather than synced:
 *
 *   node --import tsx bench/night-run.ts <database> <workbooks folder> <period> [<why not to publish>]
 *
 * runs runJob, the code of `exledger run`, with the sync skipped and every cost method: the build
 * and the check on one opening of the database (as the run takes them), the reports of the period,
 * the publish (skipped with the reason given). It prints one JSON line: each step's status, detail and time as the run measured
 * it, its peak RSS (sampled every 20 ms while the step ran: the process's own peak is the
 * largest step's), the process's peak RSS, and the build's models.
 */
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { REPORTS } from '../reports/index.ts';
import { resolveConfig } from '../src/config/config.ts';
import { parsePeriod } from '../src/export/period.ts';
import { selectReports } from '../src/jobs/report-job.ts';
import { runJob } from '../src/jobs/run-job.ts';
import type { StepName } from '../src/jobs/step.ts';
import type { ModelResult } from '../src/models/build.ts';

/** One step of the run as the script prints it. */
export interface NightRunStep {
  step: StepName;
  status: string;
  detail: string;
  ms: number;
  /** The largest RSS sampled while it ran (bytes). */
  peakBytes: number;
}

/** What the script prints on its last line. */
export interface NightRunOutput {
  status: string;
  steps: NightRunStep[];
  /** The process's peak RSS (bytes). */
  peakBytes: number;
  /** The build's models, as its step gave them. */
  models: ModelResult[];
}

const [database, out, periodText, noPublish] = process.argv.slice(2);
if (database === undefined || out === undefined || periodText === undefined) throw new Error('usage: night-run.ts <database> <workbooks folder> <period>');
const config = resolveConfig({ db: database, outDir: out, costMethods: ['fifo', 'average', 'lifo', 'hifo', 'uk'] });
const reports = selectReports(REPORTS, STREAMS.map((stream) => stream.name), ['all'], config.models.reportingCurrency);
let stepPeak = 0;
const sample = () => {
  stepPeak = Math.max(stepPeak, process.memoryUsage.rss());
};
const sampler = setInterval(sample, 20);
const peaks = new Map<StepName, number>();
const outcome = await runJob(
  config,
  { streams: STREAMS, reports, coinFormats: COIN_FORMATS },
  {
    period: parsePeriod(periodText),
    skip: {
      sync: 'not run: the night was appended to the raw tables (bench/nightly-day.ts)',
      ...(noPublish === undefined ? {} : { publish: noPublish }),
    },
    onStepStart: () => {
      stepPeak = 0;
      sample();
    },
    onStepEnd: (result) => {
      sample();
      peaks.set(result.step, stepPeak);
    },
  },
);
clearInterval(sampler);
const output: NightRunOutput = {
  status: outcome.status,
  steps: outcome.steps.map((step) => ({ step: step.step, status: step.status, detail: step.detail, ms: Math.round(step.ms), peakBytes: peaks.get(step.step) ?? 0 })),
  peakBytes: process.resourceUsage().maxRSS * 1024,
  models: outcome.outputs.build ?? [],
};
console.log(JSON.stringify(output));
