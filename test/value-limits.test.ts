import { describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { parseJsonLossless, stringifyJsonLossless } from '../src/exchange/lossless-json.ts';
import { validateRecord, VALUE_LIMITS } from '../src/extract/records.ts';
import type { FieldSpec, StreamDeclaration } from '../src/extract/stream.ts';
import { buildModels } from '../src/models/build.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import { Database } from '../src/store/database.ts';
import { startTestSandbox } from './support/sandbox.ts';
import { createWorkspace, syncOnce } from './support/sync-harness.ts';

/**
 * The promise of the sync's validation (issue 12): whatever it lets in, the models can build.
 * Every stream's record, as the sandbox sent it, is pushed to the edge of every limit at once
 * (largest amounts of either sign and 18 decimals, the largest BIGINT, 45-digit ids, the last
 * millisecond of 2099, a product of quantity and price just below its limit) and stored beside
 * the real history: every model still builds. One step past any limit is refused, naming the field.
 */

type Rec = Record<string, unknown>;
const MAX_AMOUNT = `${'9'.repeat(VALUE_LIMITS.amountIntegerDigits)}.${'9'.repeat(VALUE_LIMITS.amountDecimals)}`;
const TINY = `0.${'0'.repeat(VALUE_LIMITS.amountDecimals - 1)}1`;
/** Half the digits of the limit for each side of a product: (10^7 - 1e-18)^2 < 10^14. */
const FACTOR_MAX = `${'9'.repeat(VALUE_LIMITS.amountIntegerDigits / 2)}.${'9'.repeat(VALUE_LIMITS.amountDecimals)}`;
const FACTOR_PAST = `1${'0'.repeat(VALUE_LIMITS.amountIntegerDigits / 2)}`;
const LAST_MS = String(VALUE_LIMITS.timeMaxMs - 1);

/** The value at the edge of what `field` accepts; `low` picks the other edge of a range. */
function edge(field: FieldSpec, low: boolean): unknown {
  switch (field.type) {
    case 'amount':
      if (field.sign === 'positive') return low ? TINY : MAX_AMOUNT;
      if (field.sign === 'non-negative') return low ? '0' : MAX_AMOUNT;
      return low ? `-${MAX_AMOUNT}` : MAX_AMOUNT;
    case 'id':
      return '9'.repeat(45);
    case 'integer':
      return (low ? VALUE_LIMITS.integerMin : VALUE_LIMITS.integerMax).toString();
    case 'time_ms':
      return LAST_MS;
    default:
      return undefined;
  }
}

/** Values one step past what `field` accepts. */
function pastEdge(field: FieldSpec): string[] {
  switch (field.type) {
    case 'amount':
      return [`1${'0'.repeat(VALUE_LIMITS.amountIntegerDigits)}`, `${TINY}1`, ...(field.sign === 'positive' ? ['0'] : field.sign === 'non-negative' ? [`-${TINY}`] : [])];
    case 'id':
      return ['1'.repeat(VALUE_LIMITS.textLength + 1), '12a'];
    case 'integer':
      return [(VALUE_LIMITS.integerMax + 1n).toString(), (VALUE_LIMITS.integerMin - 1n).toString()];
    case 'time_ms':
      return [String(VALUE_LIMITS.timeMaxMs), String(VALUE_LIMITS.timeMinMs - 1)];
    case 'text':
      return ['x'.repeat(VALUE_LIMITS.textLength + 1)];
    default:
      return [];
  }
}

/** `record` with every checked field (nested ones too) at its edge; text and flags as sent. */
function atTheEdge(fields: readonly FieldSpec[], record: Rec, low: boolean): Rec {
  const out: Rec = { ...record };
  for (const field of fields) {
    if (field.shape !== undefined && out[field.name] !== undefined) {
      const value = out[field.name];
      out[field.name] = field.shape.kind === 'list' ? (value as Rec[]).map((item) => atTheEdge(field.shape!.fields, item, low)) : atTheEdge(field.shape.fields, value as Rec, low);
      continue;
    }
    const value = edge(field, low);
    if (value !== undefined) out[field.name] = value;
  }
  return out;
}

function withProducts(stream: StreamDeclaration, record: Rec, value: string): Rec {
  const out = { ...record };
  for (const pair of stream.products ?? []) for (const name of pair) out[name] = value;
  return out;
}

describe('whatever the sync lets in, the models build', () => {
  it('every stream with every limit at its edge builds every model; one step past any limit is refused naming its field', async () => {
    const sandbox = await startTestSandbox({ spotQuota: 1_000_000, futuresQuota: 1_000_000 });
    const workspace = createWorkspace(sandbox);
    try {
      const outcome = await syncOnce(workspace, sandbox, { since: '2026-09-01' });
      expect(outcome.status).toBe('ok');
      const db = await Database.open(workspace.db);
      try {
        let refusals = 0;
        for (const stream of STREAMS) {
          const [sample] = await db.all<{ r: string; rid: string }>(`SELECT _record::VARCHAR AS r, rowid::VARCHAR AS rid FROM raw.${stream.name} ORDER BY rowid DESC LIMIT 1`);
          expect(sample, stream.name).toBeDefined();
          const record = parseJsonLossless(sample!.r) as Rec;
          // The high edges (a product's factors: one at its largest, the other at its smallest),
          // the low edges, and both factors of a product as large as they may be together.
          const extremes = [atTheEdge(stream.fields, record, false), atTheEdge(stream.fields, record, true), withProducts(stream, atTheEdge(stream.fields, record, false), FACTOR_MAX)];
          for (const [index, extreme] of extremes.entries()) {
            for (const [, right] of stream.products ?? []) if (index === 0) extreme[right] = '0';
            expect(() => validateRecord(stream, extreme), stream.name).not.toThrow();
            const replace = stream.kind === 'history' ? `_key || '-edge${index}' AS _key` : `(SELECT max(_seq) + 1 FROM raw.${stream.name}) AS _seq`;
            await db.run(`INSERT INTO raw.${stream.name} SELECT * REPLACE ($1::JSON AS _record, ${replace}) FROM raw.${stream.name} WHERE rowid = ${sample!.rid}`, [stringifyJsonLossless(extreme)]);
          }

          // One field past its limit at a time, the rest of the record as sent.
          for (const field of stream.fields) {
            for (const value of pastEdge(field)) {
              expect(() => validateRecord(stream, { ...record, [field.name]: value }), `${stream.name}.${field.name} = ${value.slice(0, 30)}`).toThrow(
                new RegExp(`"${field.name}" is "${value.length > 40 ? '[^"]+…' : value.replace(/[.]/g, '\\.')}": `),
              );
              refusals += 1;
            }
          }
          if ((stream.products ?? []).length > 0) {
            expect(() => validateRecord(stream, withProducts(stream, record, FACTOR_PAST))).toThrow(/times .* is 10\^14 or more/);
          }
        }
        expect(refusals).toBeGreaterThan(100);

        const results = await buildModels(db, { ...DEFAULT_MODEL_SETTINGS, costMethods: ['fifo', 'average'] });
        expect(results.filter((result) => result.status !== 'ok').map((result) => `${result.id}: ${result.message}`)).toEqual([]);
        // The edge records are in the marts, not dropped on the way.
        const [edgeFills] = await db.all<{ n: string }>(`SELECT count(*)::VARCHAR AS n FROM staging.spot_fills WHERE fill_id = '${'9'.repeat(45)}'`);
        expect(edgeFills?.n).toBe('3');
      } finally {
        db.close();
      }
    } finally {
      await sandbox.close();
    }
  });
});
