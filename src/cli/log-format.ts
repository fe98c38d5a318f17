/**
 * Log lines for people (issue #25 §1): the node logs JSON (pino); on a terminal the CLI turns each
 * line into `14:02:11 INFO  network: listening  peerId=12D3… addresses=[…]`. JSON stays the format
 * when standard output is not a terminal (a service manager, a pipe) or with `--log-format json`.
 * A line that is not a JSON object passes through unchanged.
 */

export const LOG_FORMATS = ['human', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLOURS: Record<string, string> = { TRACE: '90', DEBUG: '90', INFO: '32', WARN: '33', ERROR: '31', FATAL: '31' };
/** fields every line has, or that the line's head already shows */
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'component', 'v']);

/** The format a node's logs take: the flag, else human on a terminal, JSON otherwise. */
export function chooseLogFormat(flag: string | undefined, isTTY: boolean | undefined): LogFormat {
  if (flag === 'json' || flag === 'human') return flag;
  return isTTY ? 'human' : 'json';
}

function value(v: unknown): string {
  if (typeof v === 'string') return /\s/.test(v) || v === '' ? JSON.stringify(v) : v;
  if (v && typeof v === 'object' && 'message' in v && typeof (v as { message: unknown }).message === 'string') return JSON.stringify((v as { message: string }).message);
  return JSON.stringify(v);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** One pino JSON line as one human line (no trailing newline). */
export function formatLogLine(line: string, opts: { colour?: boolean } = {}): string {
  let rec: Record<string, unknown>;
  try {
    const parsed = JSON.parse(line) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return line.replace(/\n$/, '');
    rec = parsed as Record<string, unknown>;
  } catch {
    return line.replace(/\n$/, '');
  }
  const t = typeof rec.time === 'number' ? new Date(rec.time) : new Date();
  const time = `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
  const level = LEVELS[rec.level as number] ?? String(rec.level ?? '');
  const shown = opts.colour ? `\x1b[${COLOURS[level] ?? '0'}m${level.padEnd(5)}\x1b[0m` : level.padEnd(5);
  const msg = typeof rec.msg === 'string' ? rec.msg : '';
  // messages often name their component already ("network: listening")
  const component = typeof rec.component === 'string' && !msg.startsWith(`${rec.component}:`) ? `${rec.component}: ` : '';
  const fields = Object.entries(rec)
    .filter(([k]) => !OMITTED.has(k))
    .map(([k, v]) => `${k}=${value(v)}`);
  return `${time} ${shown} ${component}${msg}${fields.length ? `  ${fields.join(' ')}` : ''}`;
}

/** A pino destination that writes human lines to `out`. */
export function humanLogDestination(out: { write(text: string): unknown }, opts: { colour?: boolean } = {}): { write(line: string): void } {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line.trim()) out.write(`${formatLogLine(line, opts)}\n`);
    },
  };
}
