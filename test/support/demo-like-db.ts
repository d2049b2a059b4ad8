import { rmSync } from 'node:fs';
import path from 'node:path';
import { lastClosedPeriod, type ReportPeriod } from '../../src/export/period.ts';
import { buildModels } from '../../src/models/build.ts';
import { readPricesFile } from '../../src/models/prices-file.ts';
import { DEFAULT_MODEL_SETTINGS, type ModelSettings } from '../../src/models/settings.ts';
import { writeDemoPrices } from '../../src/sandbox/demo-prices.ts';
import type { RunningSandbox } from '../../src/sandbox/server.ts';
import { Database } from '../../src/store/database.ts';
import { startTestSandbox } from './sandbox.ts';
import { createWorkspace, syncOnce, type SyncWorkspace } from './sync-harness.ts';

/** A synced sandbox history built as the demo builds it, for the tests that read its workbooks back. */
export interface DemoLikeDatabase {
  sandbox: RunningSandbox;
  workspace: SyncWorkspace;
  db: Database;
  /** The settings it was built with (fifo and average, Berlin days, USD with the demo's prices). */
  settings: ModelSettings;
  /** The last closed month at the sandbox's end, in the reporting time zone. */
  period: ReportPeriod;
  /** Closes the database and the sandbox and removes the workspace. */
  close: () => Promise<void>;
}

/**
 * Syncs a small sandbox history (seed 5) and builds it as the demo does: fifo and average cost,
 * Europe/Berlin days, valued in USD with the demo's generated USDT closes (prices such as 0.9996),
 * so the reporting-currency columns and "Needs a price" are in the workbooks too.
 */
export async function openDemoLikeDatabase(): Promise<DemoLikeDatabase> {
  const sandbox = await startTestSandbox({ scale: 'small', seed: 5, spotQuota: 1_000_000, futuresQuota: 1_000_000 });
  const workspace = createWorkspace(sandbox);
  let db: Database | undefined;
  const close = async () => {
    db?.close();
    await sandbox.close();
    rmSync(workspace.dir, { recursive: true, force: true });
  };
  try {
    await syncOnce(workspace, sandbox);
    db = await Database.open(workspace.db);
    const prices = path.join(workspace.dir, 'prices.csv');
    const endMs = sandbox.exchange.endMs;
    writeDemoPrices(prices, new Date(endMs - 400 * 86_400_000).toISOString(), new Date(endMs).toISOString());
    const settings: ModelSettings = { ...DEFAULT_MODEL_SETTINGS, costMethods: ['fifo', 'average'], reportingTimeZone: 'Europe/Berlin', reportingCurrency: 'USD', prices: readPricesFile(prices) };
    await buildModels(db, settings);
    return { sandbox, workspace, db, settings, period: lastClosedPeriod('month', 'Europe/Berlin', new Date(endMs)), close };
  } catch (error) {
    await close();
    throw error;
  }
}
