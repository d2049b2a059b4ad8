/**
 * A process that closes its database while a statement still runs, then exits, as a job does
 * when one of its queries fails while another is under way (test/database-close.test.ts).
 */
import { Database } from '../../src/store/database.ts';

const db = await Database.open(':memory:');
const running = db.all('SELECT count(*) AS n FROM range(3000000000) t(i) WHERE i % 7 = 3').then(
  () => console.log('statement: finished'),
  (error: unknown) => console.log(`statement: ${(error as Error).message.split('\n')[0]}`),
);
const queued = db.all('SELECT 1 AS one').then(
  () => console.log('queued: ran'),
  (error: unknown) => console.log(`queued: ${(error as Error).message}`),
);
// Let the statement start.
await new Promise((resolve) => setTimeout(resolve, 300));
db.close();
console.log('closed');
await Promise.all([running, queued]);
process.exit(0);
