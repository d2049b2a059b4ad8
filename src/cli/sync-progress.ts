import cliProgress from 'cli-progress';
import type { StreamResult, SyncProgress } from '../extract/sync.ts';

/** Progress bars per stream on a terminal (cli-progress); nothing otherwise. */
export function createSyncProgress(enabled: boolean): SyncProgress & { stop(): void } {
  if (!enabled) return { start() {}, advance() {}, finish() {}, stop() {} };
  const bars = new cliProgress.MultiBar(
    {
      format: ' {name} |{bar}| {value}/{total} windows | {rows} rows | {status}',
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  const byStream = new Map<string, { bar: cliProgress.SingleBar; rows: number }>();
  const id = (account: string, stream: string) => `${account}/${stream}`;
  return {
    start(account, stream, total) {
      byStream.set(id(account, stream), { bar: bars.create(total, 0, { name: id(account, stream).padEnd(34), rows: 0, status: 'running' }), rows: 0 });
    },
    advance(account, stream, rows, windows) {
      const entry = byStream.get(id(account, stream));
      if (entry === undefined) return;
      entry.rows += rows;
      entry.bar.increment(windows, { rows: entry.rows });
    },
    finish(account, stream, result: StreamResult) {
      const entry = byStream.get(id(account, stream));
      entry?.bar.update({ status: result.status === 'ok' ? 'done' : result.status });
    },
    stop() {
      bars.stop();
    },
  };
}
