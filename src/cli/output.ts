/**
 * What commands print (issue #6): human text by default, one JSON document per command with
 * `--output json` (u64 values exact, as the SDK decoded them). Progress and prompts go to stderr,
 * so stdout stays machine-readable in both modes.
 */
import { stringifyJson } from '../client/index.ts';

export type OutputFormat = 'human' | 'json';

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

export class Output {
  constructor(
    readonly format: OutputFormat,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
  ) {}

  get json(): boolean {
    return this.format === 'json';
  }

  /** Prints `value` as JSON, or `human()` as text. */
  result(value: unknown, human: () => string): void {
    this.stdout.write(this.json ? `${stringifyJson(value)}\n` : `${human()}\n`);
  }

  /** A list: a table in human mode (or `empty` when there are no rows), the array in JSON mode. */
  table<T>(rows: readonly T[], columns: Column<T>[], empty = '(none)'): void {
    this.result(rows, () => (rows.length === 0 ? empty : renderTable(rows, columns)));
  }

  /** One record: `key: value` lines in human mode. */
  record(value: Record<string, unknown>): void {
    this.result(value, () => renderRecord(value));
  }
}

export function renderTable<T>(rows: readonly T[], columns: Column<T>[]): string {
  const cells = rows.map((row) => columns.map((c) => cell(c.value(row))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n');
}

export function renderRecord(value: Record<string, unknown>): string {
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${cell(v)}`).join('\n');
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) return value.length ? value.join(', ') : '-';
  return stringifyJson(value);
}

/** Unix seconds as ISO 8601 (UTC) for people; `-` when absent. */
export function when(secs: number | bigint | null | undefined): string {
  return secs === null || secs === undefined ? '-' : new Date(Number(secs) * 1000).toISOString();
}
