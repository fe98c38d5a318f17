/**
 * Progress on stderr for uploads, downloads and installs (issue #6). A bar on a terminal; with
 * `HEARTH_PROGRESS=lines` (CI logs, tests) one line per 10 % instead; nothing otherwise or with
 * `--output json`, so pipes and JSON consumers see only the result.
 */
export interface ProgressSink {
  isTTY?: boolean;
  write(text: string): unknown;
}

type Mode = 'bar' | 'lines' | 'off';

export class Progress {
  private readonly mode: Mode;
  private readonly sink: ProgressSink;
  private lastTenth = -1;
  private lastDraw = 0;
  private readonly started = Date.now();
  private readonly describe: (done: number, total?: number) => string;

  /** `format` words the counts (default: bytes), e.g. `2/3 contexts` for a migration. */
  constructor(
    private readonly label: string,
    opts: { json?: boolean; sink?: ProgressSink; env?: NodeJS.ProcessEnv; format?: (done: number, total?: number) => string } = {},
  ) {
    this.describe = opts.format ?? describe;
    const sink = opts.sink ?? process.stderr;
    const env = opts.env ?? process.env;
    this.sink = sink;
    if (opts.json) this.mode = 'off';
    else if (env.HEARTH_PROGRESS === 'lines') this.mode = 'lines';
    else if (env.HEARTH_PROGRESS === 'off') this.mode = 'off';
    else this.mode = sink.isTTY ? 'bar' : 'off';
  }

  /** Bytes done of `total` (unknown total: bytes only). */
  update(done: number, total?: number): void {
    if (this.mode === 'off') return;
    const fraction = total ? Math.min(1, done / total) : undefined;
    if (this.mode === 'lines') {
      const tenth = fraction === undefined ? -1 : Math.floor(fraction * 10);
      if (tenth === this.lastTenth) return;
      this.lastTenth = tenth;
      this.sink.write(`${this.label}: ${this.describe(done, total)}\n`);
      return;
    }
    const now = Date.now();
    if (now - this.lastDraw < 80 && done !== total) return;
    this.lastDraw = now;
    const width = 24;
    const filled = fraction === undefined ? 0 : Math.round(fraction * width);
    const bar = fraction === undefined ? '' : `[${'#'.repeat(filled)}${' '.repeat(width - filled)}] `;
    this.sink.write(`\r${this.label} ${bar}${this.describe(done, total)}\x1b[K`);
  }

  /** A phase of an operation without byte counts (e.g. "verifying"). */
  phase(text: string): void {
    if (this.mode === 'off') return;
    this.sink.write(this.mode === 'bar' ? `\r${this.label}: ${text}\x1b[K` : `${this.label}: ${text}\n`);
  }

  done(text = 'done'): void {
    if (this.mode === 'off') return;
    const secs = ((Date.now() - this.started) / 1000).toFixed(1);
    this.sink.write(this.mode === 'bar' ? `\r${this.label}: ${text} (${secs} s)\x1b[K\n` : `${this.label}: ${text}\n`);
  }
}

function describe(done: number, total?: number): string {
  if (total === undefined) return bytes(done);
  return `${Math.floor((done / Math.max(total, 1)) * 100)}% ${bytes(done)} / ${bytes(total)}`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}
