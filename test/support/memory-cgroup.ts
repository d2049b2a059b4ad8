import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A memory cgroup made for one test: processes started through `wrap` run inside it, capped at
 * `limitBytes` (no swap), the way a container or a systemd unit with MemoryMax caps a nightly job
 * (Node sizes its heap from that cap, DuckDB does not). Linux only, and only where this process
 * may make a cgroup (root, or a delegated subtree): cgroup v2 (memory.max, memory.peak) or v1
 * (memory.limit_in_bytes, memory.max_usage_in_bytes).
 */
export interface MemoryCgroup {
  /** The command line that runs `argv` inside the cgroup (a shell moves itself in, then execs it). */
  wrap(argv: readonly string[]): string[];
  /** The highest memory use the cgroup saw, bytes (page cache included, as the kernel counts it). */
  peakBytes(): number;
  /** Removes the cgroup (once its processes have ended). */
  remove(): void;
}

const V2_ROOT = '/sys/fs/cgroup';
const V1_ROOT = '/sys/fs/cgroup/memory';

/** A cgroup capped at limitBytes, or why none can be made here (a sentence for the skip). */
export function makeMemoryCgroup(name: string, limitBytes: number): MemoryCgroup | string {
  if (process.platform !== 'linux') return `memory cgroups are Linux's; this is ${process.platform}`;
  const v2 = existsSync(path.join(V2_ROOT, 'cgroup.controllers'));
  const root = v2 ? V2_ROOT : V1_ROOT;
  if (!v2 && !existsSync(path.join(V1_ROOT, 'memory.limit_in_bytes'))) return 'no memory cgroup hierarchy is mounted (neither cgroup v2 nor v1\'s memory controller)';
  if (v2 && !readFileSync(path.join(V2_ROOT, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('memory')) return 'cgroup v2 has no memory controller enabled for child groups here';
  const dir = path.join(root, `${name}-${process.pid}`);
  try {
    mkdirSync(dir);
  } catch (error) {
    return `this process may not make a cgroup under ${root} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): run as root or in a delegated cgroup`;
  }
  try {
    if (v2) {
      writeFileSync(path.join(dir, 'memory.max'), String(limitBytes));
      if (existsSync(path.join(dir, 'memory.swap.max'))) writeFileSync(path.join(dir, 'memory.swap.max'), '0');
    } else {
      writeFileSync(path.join(dir, 'memory.limit_in_bytes'), String(limitBytes));
      if (existsSync(path.join(dir, 'memory.memsw.limit_in_bytes'))) writeFileSync(path.join(dir, 'memory.memsw.limit_in_bytes'), String(limitBytes));
    }
  } catch (error) {
    rmdirSync(dir);
    return `the cgroup's memory limit cannot be set here (${(error as Error).message})`;
  }
  return {
    wrap: (argv) => ['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir, ...argv],
    peakBytes: () => Number(readFileSync(path.join(dir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes'), 'utf8').trim()),
    remove: () => rmdirSync(dir),
  };
}
