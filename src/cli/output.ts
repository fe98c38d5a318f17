/**
 * What commands print (issues #6, #16). Three formats, chosen with the global `--output` (in any
 * position on the command line):
 *
 * - `table` (the default; `human` is the older name): text for people; tables fit 100 columns,
 *   long values (ids) shortened with `…` unless `--wide`;
 * - `plain`: tab-separated rows without a header, values in full (for `cut`, `awk`, `read`);
 * - `json`: one JSON document per command (u64 values exact, as the SDK decoded them).
 *
 * Byte fields (event payloads, presence state, metadata, invitation fields) arrive as arrays of
 * byte values; every format shows them decoded — text when printable UTF-8, `0x`-hex otherwise,
 * plain hex for ids and keys — unless `--raw` asks for what the node sent. Progress and prompts
 * go to stderr, so stdout stays machine-readable.
 */
import { bytesToHex, displayBytes, isByteArray, stringifyJson } from '../client/index.ts';

export type OutputFormat = 'table' | 'plain' | 'json';

export const OUTPUT_FORMATS = ['table', 'plain', 'json'] as const;

/** The width a table must fit without `--wide`. */
export const TABLE_WIDTH = 100;

export interface OutputOptions {
  /** full values in tables instead of fitting {@link TABLE_WIDTH} columns */
  wide?: boolean;
  /** byte fields as the node sent them */
  raw?: boolean;
}

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

export class Output {
  constructor(
    readonly format: OutputFormat,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    readonly options: OutputOptions = {},
  ) {}

  get json(): boolean {
    return this.format === 'json';
  }

  /** A value as this output shows it: byte fields decoded unless `--raw`. */
  display<T>(value: T): T {
    return this.options.raw ? value : (decodeByteFields(value) as T);
  }

  /** Prints `value` as JSON, or `human()` as text. */
  result(value: unknown, human: () => string): void {
    this.stdout.write(this.json ? `${stringifyJson(this.display(value))}\n` : `${human()}\n`);
  }

  /** A list: a table (or `empty` when there are no rows), tab-separated rows, or the array in JSON. */
  table<T>(rows: readonly T[], columns: Column<T>[], empty = '(none)'): void {
    if (this.format === 'plain') {
      this.stdout.write(rows.map((r) => `${renderPlainRow(r, columns)}\n`).join(''));
      return;
    }
    let cut = false;
    this.result(rows, () => {
      if (rows.length === 0) return empty;
      const laid = layoutTable(rows, columns, { wide: this.options.wide });
      cut = laid.cut;
      return laid.text;
    });
    // on stderr, so stdout stays the table alone for a reader that parses it
    if (cut) process.stderr.write('(some values are cut short with …: --wide shows them whole)\n');
  }

  /** One record: `key: value` lines, `key<TAB>value` lines in plain output, an object in JSON. */
  record(value: Record<string, unknown>): void {
    if (this.format === 'plain') {
      this.stdout.write(renderPlainRecord(value));
      return;
    }
    this.result(value, () => renderRecord(value));
  }
}

/** Aligned columns under upper-case headers, shortened to fit `width` unless `wide`. */
export function renderTable<T>(rows: readonly T[], columns: Column<T>[], opts: { wide?: boolean; width?: number } = {}): string {
  return layoutTable(rows, columns, opts).text;
}

/** {@link renderTable}, and whether any value was cut short (so the caller can point at `--wide`). */
export function layoutTable<T>(rows: readonly T[], columns: Column<T>[], opts: { wide?: boolean; width?: number } = {}): { text: string; cut: boolean } {
  const cells = rows.map((row) => columns.map((c) => oneLine(cell(c.value(row)))));
  const headers = columns.map((c) => c.header.toUpperCase());
  const widths = columns.map((_, i) => Math.max(headers[i].length, ...cells.map((r) => r[i].length)));
  if (!opts.wide) fit(widths, headers, opts.width ?? TABLE_WIDTH);
  let cut = false;
  const line = (values: string[]) =>
    values
      .map((v, i) => {
        const short = v.length > widths[i];
        cut ||= short;
        const shown = short ? `${v.slice(0, Math.max(1, widths[i] - 1))}…` : v;
        return i === values.length - 1 ? shown : shown.padEnd(widths[i]);
      })
      .join('  ')
      .trimEnd();
  const text = [line(headers), ...cells.map(line)].join('\n');
  return { text, cut };
}

/**
 * Narrows the widest columns, one character at a time, until the table fits `width` (2 spaces
 * between columns): first down to 20 characters (dates and short values stay whole, long ids
 * give way), then down to 9 (an id's first 8 and `…`). A column never gets narrower than its header.
 */
function fit(widths: number[], headers: string[], width: number): void {
  const total = () => widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  for (const least of [20, 9]) {
    const floor = headers.map((h) => Math.max(h.length, least));
    while (total() > width) {
      let widest = -1;
      for (let i = 0; i < widths.length; i++) if (widths[i] > floor[i] && (widest === -1 || widths[i] > widths[widest])) widest = i;
      if (widest === -1) break; // as narrow as this pass goes
      widths[widest]--;
    }
  }
}

export function renderRecord(value: Record<string, unknown>): string {
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${cell(v)}`).join('\n');
}

function renderPlainRow<T>(row: T, columns: Column<T>[]): string {
  return columns.map((c) => plainCell(c.value(row))).join('\t');
}

function renderPlainRecord(value: Record<string, unknown>): string {
  return Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}\t${plainCell(v)}\n`)
    .join('');
}

/** Tabs and newlines would break a plain row: written as spaces. */
const plainCell = (value: unknown) => oneLine(cell(value)).replace(/\t/g, ' ');
const oneLine = (text: string) => text.replace(/\r?\n/g, ' ');

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) return value.length ? value.join(', ') : '-';
  return stringifyJson(value);
}

/** Unix seconds as ISO 8601 (UTC, whole seconds) for people; `-` when absent. */
export function when(secs: number | bigint | null | undefined): string {
  return secs === null || secs === undefined ? '-' : new Date(Number(secs) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Byte fields whose bytes are content: shown as text when printable UTF-8, else `0x`-hex. */
const CONTENT_FIELDS = new Set(['data', 'state', 'metadata', 'initializationParams']);
/** Byte fields that are ids, keys or hashes: shown as hex, as ids are everywhere else. */
const ID_FIELDS = new Set(['inviter_identity', 'group_id', 'secret_salt', 'application_id', 'app_key', 'context_id', 'public_key']);
/** Lists of ids sent as byte arrays. */
const ID_LIST_FIELDS = new Set(['dagHeads']);

/**
 * Replaces the byte fields of a value (at any depth) with their display form: a non-empty array of
 * byte values under a content field becomes text (or `0x`-hex), under an id field 64-hex. Every
 * other value is left as it is, so a field that is already a string or an object is untouched.
 */
export function decodeByteFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeByteFields);
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (CONTENT_FIELDS.has(key) && isByteArray(v) && v.length > 0) out[key] = displayBytes(v);
    else if (ID_FIELDS.has(key) && isByteArray(v) && v.length > 0) out[key] = bytesToHex(v);
    else if (ID_LIST_FIELDS.has(key) && Array.isArray(v) && v.every((x) => isByteArray(x))) out[key] = v.map((x) => bytesToHex(x as number[]));
    else out[key] = decodeByteFields(v);
  }
  return out;
}

/**
 * The inverse of {@link decodeByteFields} for id fields: hex strings back to byte arrays, so what
 * a command printed (an invitation) can be handed back to the node, which signs and checks bytes.
 */
export function restoreByteFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(restoreByteFields);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    out[key] = ID_FIELDS.has(key) && typeof v === 'string' && /^([0-9a-f]{2})+$/i.test(v) ? hexBytes(v) : restoreByteFields(v);
  }
  return out;
}

function hexBytes(hex: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < hex.length; i += 2) out.push(parseInt(hex.slice(i, i + 2), 16));
  return out;
}
