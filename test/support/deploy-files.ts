import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { REPO } from './cli-process.ts';

/**
 * The deployment files of deploy/, read as cron and systemd read them, so the tests run what an
 * operator installs (the docs quote these files; the tests never read the README).
 */

/** Where the files say exledger is checked out (and, for cron, works). */
export const INSTALLED_AT = '/srv/exledger';

/** deploy/crontab: its variable lines (as cron passes them to the job) and the job's command. */
export function crontabJob(): { environment: Record<string, string>; command: string } {
  const lines = readFileSync(path.join(REPO, 'deploy', 'crontab'), 'utf8').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  const environment: Record<string, string> = {};
  const jobs: string[] = [];
  for (const line of lines) {
    const variable = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (variable !== null) environment[variable[1]!] = variable[2]!;
    else jobs.push(line);
  }
  if (jobs.length !== 1) throw new Error(`deploy/crontab: expected one job line, found ${jobs.length}`);
  // Five time fields, then the command, which cron hands to /bin/sh -c.
  const command = /^(?:\S+\s+){5}(.+)$/.exec(jobs[0]!)?.[1];
  if (command === undefined) throw new Error(`deploy/crontab: not a job line: ${jobs[0]}`);
  return { environment, command };
}

/** The settings of one section of a systemd unit file, e.g. `Service` (a key set twice keeps both). */
export function unitSection(file: string, section: string): Record<string, string[]> {
  const settings: Record<string, string[]> = {};
  let current: string | undefined;
  for (const raw of readFileSync(path.join(REPO, 'deploy', file), 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const heading = /^\[(.+)\]$/.exec(line);
    if (heading !== null) {
      current = heading[1];
      continue;
    }
    const [key, ...value] = line.split('=');
    if (current === section) (settings[key!.trim()] ??= []).push(value.join('=').trim());
  }
  return settings;
}

/**
 * Processes working in `folder` or naming it on their command line (Linux /proc): what a stopped
 * job may have left running (a child that outlived its parent keeps its working folder).
 */
export function processesUsing(folder: string): { pid: number; command: string }[] {
  const found: { pid: number; command: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      if (cwd === folder || cwd.startsWith(`${folder}/`) || command.includes(folder)) found.push({ pid: Number(name), command });
    } catch {
      // Ended meanwhile, or another user's (not ours to have left).
    }
  }
  return found;
}
