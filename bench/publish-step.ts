/**
 * The publish step of `exledger run` alone, in a process of its own so that its wall time and peak
 * memory are measured as a command's (bench/measure-command.ts measureScript):
 *
 *   node --import tsx bench/publish-step.ts <database>
 *
 * publishes the database as the run does (publishDatabase with the project's placements) and prints
 * one JSON line: how it was published (incremental, or a whole copy and why), the tables and rows
 * it copied, the step's own time (ms, without starting node) and where it went (ms per phase).
 */
import { modelPlacements } from '../src/jobs/publish-job.ts';
import { publishDatabase } from '../src/store/publish.ts';

/** What the script prints on its last line. */
export interface PublishStepOutput {
  how: 'incremental' | 'full';
  why?: string;
  tables?: { changed: number; of: number; rows: number };
  bytes: number;
  ms: number;
  phases: Record<string, number>;
}

const database = process.argv[2];
if (database === undefined) throw new Error('usage: publish-step.ts <database>');
const result = await publishDatabase(database, { placements: modelPlacements() });
const output: PublishStepOutput = {
  how: result.how,
  ...(result.why === undefined ? {} : { why: result.why }),
  ...(result.tables === undefined ? {} : { tables: result.tables }),
  bytes: result.bytes,
  ms: result.ms,
  phases: Object.fromEntries(Object.entries(result.phases).map(([name, ms]) => [name, Math.round(ms)])),
};
console.log(JSON.stringify(output));
