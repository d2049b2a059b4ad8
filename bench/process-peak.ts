import { readdirSync, readFileSync } from 'node:fs';

/** Peak memory of a benchmarked command when /usr/bin/time is missing: polled from /proc. */

/** A process and its descendants (from /proc/<pid>/task/<tid>/children), for the polled peak. */
export function processTree(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  const pids = [pid];
  for (let index = 0; index < pids.length; index += 1) {
    try {
      for (const task of readdirSync(`/proc/${pids[index]}/task`)) {
        const children = readFileSync(`/proc/${pids[index]}/task/${task}/children`, 'utf8').trim();
        if (children !== '') pids.push(...children.split(' ').map(Number));
      }
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The peak resident memory of a process so far (VmHWM), kB; undefined once it is gone. */
export function readVmHwmKb(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}
