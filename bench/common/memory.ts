/** Memory figures for benchmark reports. */
import { readFileSync } from 'node:fs';

export const MIB = 2 ** 20;

export function formatMiB(bytes: number, digits = 1): string {
  return `${(bytes / MIB).toFixed(digits)} MiB`;
}

/** Resident set size of process `pid` in bytes (from /proc); undefined when it cannot be read. */
export function rssOf(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}
