import { createWriteStream, type WriteStream } from 'node:fs';
import type { FaultKind } from './faults.ts';
import { stringifyWire } from './wire-json.ts';

/** One exchange request as the sandbox saw and answered it (admin requests are not logged). */
export interface RequestLogEntry {
  /** 1, 2, 3, ... in the order answers were sent; not reset by clearing the log. */
  seq: number;
  /** Server time (clock skew included) when the request arrived, epoch ms. */
  at: number;
  method: string;
  /** The path, without the query string. */
  path: string;
  /** Endpoint id, e.g. 'spot.fills', 'futures.fills', 'rebate.commission'; 'unknown' for a path the exchange does not have. */
  endpoint: string;
  /** The query parameters or the parsed body (no headers); numbers of a body as parsed losslessly. */
  params: Record<string, unknown>;
  /** UID of the authenticated account; null for public endpoints and failed authentication. */
  uid: string | null;
  /** Weight charged to the IP budget (0 when refused with 429). */
  ipWeight: number;
  /** Weight charged to the UID budget (0 when not counted per UID, not authenticated or refused with 429). */
  uidWeight: number;
  /** HTTP status; 0 when the connection was reset without an answer. */
  status: number;
  /** The body's code: '00000'/'200' on spot/rebate success, the error code of a refusal, null otherwise. */
  code: string | null;
  /** Records returned (the main list's length); null for payloads that are not lists and for failures. */
  rows: number | null;
  fault: null | FaultKind;
  /** From arrival to the answer (or reset), ms. */
  durationMs: number;
}

/** The request log: kept in memory, optionally also appended to a file as JSON lines. */
export class RequestLog {
  /** The live list (cleared in place, so a reference to it stays valid). */
  readonly entries: RequestLogEntry[] = [];
  private seq = 0;
  private readonly stream: WriteStream | undefined;

  constructor(file?: string) {
    this.stream = file === undefined ? undefined : createWriteStream(file, { flags: 'a' });
  }

  /** Appends an entry, numbering it. */
  append(entry: Omit<RequestLogEntry, 'seq'>): RequestLogEntry {
    this.seq += 1;
    const numbered: RequestLogEntry = { seq: this.seq, ...entry };
    this.entries.push(numbered);
    this.stream?.write(`${stringifyWire(numbered)}\n`);
    return numbered;
  }

  /** Forgets the entries kept in memory (the file keeps them). */
  clear(): void {
    this.entries.length = 0;
  }

  /** Flushes and closes the file. */
  close(): Promise<void> {
    const stream = this.stream;
    if (stream === undefined) return Promise.resolve();
    return new Promise((resolve, reject) => {
      stream.end((error?: Error | null) => (error ? reject(error) : resolve()));
    });
  }
}
