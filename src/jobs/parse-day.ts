import dayjs from 'dayjs';
import utc from 'dayjs/plugin/utc.js';
import { ConfigError } from '../errors.ts';

dayjs.extend(utc);

/** Parses a YYYY-MM-DD flag or setting as midnight UTC, naming `flag` when it is not a real date. */
export function parseDay(flag: string, value: string): number {
  const day = dayjs.utc(value);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || !day.isValid() || day.format('YYYY-MM-DD') !== value) {
    throw new ConfigError(flag, `"${value}" is not a date of the form YYYY-MM-DD`, { hint: `give a real day in that form, e.g. ${flag.startsWith('--') ? `${flag} 2026-11-01` : `"${flag.split('.').at(-1)}": "2026-11-01"`}` });
  }
  return day.valueOf();
}
