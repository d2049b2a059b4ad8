/**
 * Publishes the database named by the first argument, as the publish step of `exledger run` does
 * (publishDatabase with the project's placements): prints `publishing` as it starts, then its result as one JSON line: a
 * publish in a process of its own, to be killed (test/support/published-copy.ts publishInProcess).
 */
import { modelPlacements } from '../../src/jobs/publish-job.ts';
import { publishDatabase } from '../../src/store/publish.ts';

const placements = modelPlacements();
// Said once everything is loaded, so a test can time its kill from the publish itself.
console.log('publishing');
const result = await publishDatabase(process.argv[2]!, { placements });
console.log(JSON.stringify({ how: result.how, why: result.why, path: result.path }));
