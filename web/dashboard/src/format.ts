/** Small formatters shared by the pages. */
import type { U64 } from '../../../src/client/index.ts';

export function size(n: number | bigint | undefined | null): string {
  if (n === undefined || n === null) return '–';
  const v = Number(n);
  if (v < 1024) return `${v} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let x = v / 1024;
  let i = 0;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x.toFixed(1)} ${units[i]}`;
}

export function duration(secs: U64 | number | undefined): string {
  if (secs === undefined) return '–';
  let s = Number(secs);
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d) return `${d} d ${h} h`;
  if (h) return `${h} h ${m} min`;
  if (m) return `${m} min ${s} s`;
  return `${s} s`;
}

/** Unix seconds → local date and time; `–` when absent. */
export function when(secs: number | bigint | null | undefined): string {
  return secs === null || secs === undefined ? '–' : new Date(Number(secs) * 1000).toLocaleString();
}

/** A long id shortened for a table cell (the full id is in the cell's title and copy button). */
export function short(id: string | undefined | null, keep = 10): string {
  if (!id) return '–';
  return id.length > keep + 4 ? `${id.slice(0, keep)}…` : id;
}

/** JSON for people: u64 values (bigint) written exactly, two-space indent. */
export function pretty(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) ?? 'null';
}
