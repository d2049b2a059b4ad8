import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { startSandboxProcess, type SandboxProcess } from './sandbox-process.ts';

/** One rewrite: in answers to `path`, the first match of `pattern` becomes `replacement`. */
export interface RewriteRule {
  /** The request path (no query), e.g. `/api/v2/trade/fills`. */
  path: string;
  /** A regular expression over the answer's text. */
  pattern: string;
  replacement: string;
}

/** What the proxy changed in one answer. */
export interface Rewrite {
  path: string;
  /** The text it replaced. */
  was: string;
}

/**
 * A proxy in a process of its own in front of an exchange (the sandbox in another process):
 * requests pass through unchanged (so their signatures still verify), answers come back with the
 * rules' rewrites, as a compromised or broken gateway would send them.
 */
export interface HostileProxy {
  url: string;
  /** Replaces the rules (and forgets the rewrites made so far). */
  setRules: (rules: readonly RewriteRule[]) => Promise<void>;
  /** The rewrites made since the rules were set. */
  rewrites: () => Promise<Rewrite[]>;
  stop: () => Promise<void>;
}

const SCRIPT = `
  const http = require('node:http');
  const target = new URL(process.argv[1]);
  let rules = [];
  const rewrites = [];
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      if (request.url === '/__rules') {
        rules = JSON.parse(body.toString());
        rewrites.length = 0;
        return response.end('ok');
      }
      if (request.url === '/__rewrites') return response.end(JSON.stringify(rewrites));
      const upstream = http.request(
        { host: target.hostname, port: target.port, method: request.method, path: request.url, headers: { ...request.headers, host: target.host } },
        (answer) => {
          const parts = [];
          answer.on('data', (chunk) => parts.push(chunk));
          answer.on('end', () => {
            let text = Buffer.concat(parts).toString();
            const pathname = request.url.split('?')[0];
            for (const rule of rules) {
              if (rule.path !== pathname) continue;
              const match = new RegExp(rule.pattern).exec(text);
              if (match === null) continue;
              text = text.slice(0, match.index) + rule.replacement + text.slice(match.index + match[0].length);
              rewrites.push({ path: pathname, was: match[0] });
            }
            const headers = { ...answer.headers };
            delete headers['content-length'];
            delete headers['transfer-encoding'];
            response.writeHead(answer.statusCode, { ...headers, 'content-length': Buffer.byteLength(text) });
            response.end(text);
          });
        },
      );
      upstream.on('error', () => response.destroy());
      upstream.end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + server.address().port));
`;

/** Starts the proxy in front of `targetUrl` and waits until it listens. */
export async function startHostileProxy(targetUrl: string): Promise<HostileProxy> {
  const child: ChildProcess = spawn(process.execPath, ['-e', SCRIPT, targetUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [url] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return {
    url,
    setRules: async (rules) => {
      const answer = await fetch(`${url}/__rules`, { method: 'POST', body: JSON.stringify(rules) });
      if (!answer.ok) throw new Error(`the proxy refused the rules: ${answer.status}`);
    },
    rewrites: async () => (await (await fetch(`${url}/__rewrites`)).json()) as Rewrite[],
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** The sandbox in a process of its own and a hostile proxy in front of it, in another. */
export interface ProxiedSandbox {
  exchange: SandboxProcess;
  proxy: HostileProxy;
  /** The settings that send exledger through the proxy (the sandbox's own go straight to it). */
  viaProxy: () => Record<string, string>;
  /** Stops both; the sandbox's exit code. */
  stop: () => Promise<number | null>;
}

/** Starts `exledger sandbox` (1-second windows at the real quotas: 500 spot, 1000 futures) and a proxy in front of it. */
export async function startProxiedSandbox(): Promise<ProxiedSandbox> {
  const exchange = await startSandboxProcess(['--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '500', '--futures-quota', '1000']);
  const proxy = await startHostileProxy(exchange.url);
  return {
    exchange,
    proxy,
    viaProxy: () => ({ ...exchange.settings, EXLEDGER_SPOT_BASE_URL: proxy.url, EXLEDGER_CONTRACT_BASE_URL: proxy.url }),
    stop: async () => {
      await proxy.stop();
      return exchange.stop();
    },
  };
}
