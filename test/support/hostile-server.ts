import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/** How the hostile server answers every request but its own `/__written`. */
export type HostileMode = 'trickle' | 'huge';

/** An HTTP server in a process of its own that answers like a broken or malicious exchange. */
export interface HostileServer {
  url: string;
  /** Bytes of answer it managed to write to each connection, in order. */
  written: () => Promise<number[]>;
  stop: () => Promise<void>;
}

/**
 * `trickle`: a 200 status, then one byte every 200 ms, forever (an idle timeout never fires).
 * `huge`: a 200 status and an endless JSON array opening, `[[[[…`, as fast as the client reads.
 */
const SCRIPT = `
  const http = require('node:http');
  const mode = process.argv[1];
  const written = [];
  const server = http.createServer((request, response) => {
    if (request.url === '/__written') return response.end(JSON.stringify(written));
    const index = written.push(0) - 1;
    response.writeHead(200, { 'Content-Type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, '[');
    const send = () => {
      if (response.destroyed) return;
      if (mode === 'trickle') {
        response.write('[', () => (written[index] += 1));
        setTimeout(send, 200);
      } else {
        let more = true;
        while (more && !response.destroyed && written[index] < 512 * 1024 * 1024) {
          written[index] += chunk.length;
          more = response.write(chunk);
        }
        if (!more) response.once('drain', send);
      }
    };
    send();
  });
  server.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + server.address().port));
`;

/** Starts the hostile server and waits until it listens. */
export async function startHostileServer(mode: HostileMode): Promise<HostileServer> {
  const child: ChildProcess = spawn(process.execPath, ['-e', SCRIPT, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [url] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return {
    url,
    written: async () => (await (await fetch(`${url}/__written`)).json()) as number[],
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
