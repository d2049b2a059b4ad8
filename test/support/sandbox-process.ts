import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { BIN, cronEnvironment, REPO } from './cli-process.ts';

/** `exledger sandbox` running in a process of its own, as an operator starts it in another shell. */
export interface SandboxProcess {
  child: ChildProcess;
  url: string;
  account: { uid: string; apiKey: string; secret: string; passphrase: string };
  /** Every account it serves (`--accounts N`), the first being `account`. */
  accounts: SandboxProcess['account'][];
  /** The exchange's settings as the environment variables exledger reads. */
  settings: Record<string, string>;
  /** Every request the exchange answered so far (GET /__sandbox/requests). */
  requests: () => Promise<SandboxRequest[]>;
  /** Stops it (SIGTERM) and waits for it to exit; its exit code. */
  stop: () => Promise<number | null>;
}

/** One entry of the sandbox's request log. */
export interface SandboxRequest {
  at: number;
  endpoint: string;
  uid: string | null;
  ipWeight: number;
  uidWeight: number | null;
  status: number;
}

/** Starts `exledger sandbox --json <flags>` and waits for its ready line. */
export async function startSandboxProcess(flags: readonly string[]): Promise<SandboxProcess> {
  const child = spawn(process.execPath, [BIN, 'sandbox', '--json', '--port', '0', ...flags], { cwd: REPO, env: cronEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const [line] = (await Promise.race([
    once(createInterface({ input: child.stdout }), 'line'),
    exited.then(() => {
      throw new Error(`exledger sandbox exited before it listened: ${stderr}`);
    }),
  ])) as [string];
  const ready = JSON.parse(line) as { url: string; accounts: SandboxProcess['account'][] };
  const account = ready.accounts[0]!;
  return {
    child,
    url: ready.url,
    account,
    accounts: ready.accounts,
    settings: {
      EXLEDGER_SPOT_BASE_URL: ready.url,
      EXLEDGER_CONTRACT_BASE_URL: ready.url,
      EXLEDGER_API_KEY: account.apiKey,
      EXLEDGER_API_SECRET: account.secret,
      EXLEDGER_API_PASSPHRASE: account.passphrase,
    },
    requests: async () => (await (await fetch(`${ready.url}/__sandbox/requests`)).json()) as SandboxRequest[],
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}
