import { DuckDBInstance } from '@duckdb/node-api';
const i = await DuckDBInstance.create('/tmp/synct/data/exledger.duckdb', {access_mode:'READ_ONLY'}); const c = await i.connect();
for (const q of process.argv.slice(2)) console.log(JSON.stringify((await c.runAndReadAll(q)).getRowObjectsJson()));
