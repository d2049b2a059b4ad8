/**
 * The identity of one sandbox account: UID, API key, secret, passphrase and account ids, all
 * derived from the seed and the account's index so tests can recompute them.
 */
import type { Rng } from './random.ts';

/** Who one sandbox account is. */
export interface AccountCredentials {
  /** 10-digit UID (the exchange counts UID weight against it). */
  uid: string;
  /** "bg_" and 32 hex digits. */
  apiKey: string;
  /** 64 hex digits. */
  secret: string;
  /** 16 letters and digits. */
  passphrase: string;
  /** 18-digit spot account id (accountId of fills and orders). */
  spotAccountId: string;
  /** 18-digit futures account id (2.11 account.id). */
  futuresAccountId: string;
}

const PASSPHRASE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** Draws one account's credentials. */
export function createCredentials(rng: Rng): AccountCredentials {
  let passphrase = '';
  for (let i = 0; i < 16; i++) passphrase += PASSPHRASE_ALPHABET[rng.int(0, PASSPHRASE_ALPHABET.length)];
  return {
    // Never starts with 7: invited users' UIDs do.
    uid: `${rng.int(1, 7)}${rng.digits(9)}`,
    apiKey: `bg_${rng.hex(32)}`,
    secret: rng.hex(64),
    passphrase,
    spotAccountId: rng.digits(18),
    futuresAccountId: rng.digits(18),
  };
}
