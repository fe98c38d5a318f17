/**
 * What `hearth workflow run` prints, as merobox prints a run: each step's name and type as it
 * starts, its progress, the values it exported, pass or fail with its time, and a summary line.
 * For people (the default) these are lines on stdout as they happen; with `--output json` each is
 * one JSON line on stderr (for CI logs) and stdout gets one JSON document: the whole run.
 *
 * A value exported by an output marked `secret: true` is withheld from all of it: from then on its
 * text is `<secret withheld>` wherever it would appear (its export line, the captured values, a step
 * name or error that quotes it, the JSON events and document). merobox has no such notion; it
 * prints every exported value (docs/workflows.md "Secrets").
 */
import { textOf, type Values } from './values.ts';

export type StepStatus = 'passed' | 'failed' | 'expected_failure';

export interface StepRecord {
  step: string;
  name: string;
  type: string;
  node?: string;
  status: StepStatus;
  ms: number;
  exported: Values;
  error?: string;
  request?: string;
  answer?: string;
}

export interface RunSummary {
  workflow: string;
  file: string;
  ok: boolean;
  nodes: { name: string; url: string; pid: number | null }[];
  home: string;
  nodesStartMs: number;
  durationMs: number;
  steps: StepRecord[];
  exported: Values;
  failed: StepRecord | null;
  notes: string[];
}

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const WITHHELD = '<secret withheld>';
/** a secret's text at least this long is withheld wherever it appears; a shorter one only as a whole value */
const SHORT_SECRET = 4;
const shown = (v: unknown) => {
  const t = textOf(v);
  return t.length > 100 ? `${t.slice(0, 97)}...` : t;
};

export class Reporter {
  /** the texts withheld from everything printed, longest first (a secret may contain a shorter one) */
  private secrets: string[] = [];
  /**
   * secrets shorter than SHORT_SECRET: withheld only where a whole value is that text. Masked inside
   * every text, a secret `7` or `ab` would turn each "7" or "ab" of every later line (timings, ids,
   * words) into `<secret withheld>`.
   */
  private readonly exact = new Set<string>();

  constructor(
    private readonly json: boolean,
    private readonly out: NodeJS.WritableStream = process.stdout,
    private readonly err: NodeJS.WritableStream = process.stderr,
  ) {}

  private line(event: Record<string, unknown>, human: string): void {
    if (this.json) this.err.write(`${JSON.stringify(this.masked(event))}\n`);
    else this.out.write(`${this.masked(human)}\n`);
  }

  /** Withholds `value` from every line printed from now on: its text, or each string and number in it. */
  secret(value: unknown): void {
    if (typeof value === 'string' || typeof value === 'number') {
      const text = String(value);
      if (text.length > 0 && text.length < SHORT_SECRET) this.exact.add(text);
      else if (text && !this.secrets.includes(text)) this.secrets = [...this.secrets, text].sort((a, b) => b.length - a.length);
    } else if (value && typeof value === 'object') for (const v of Object.values(value)) this.secret(v);
  }

  /** `x` with each secret's text replaced by `<secret withheld>`, in every string inside it too. */
  masked<T>(x: T): T {
    if (!this.secrets.length && !this.exact.size) return x;
    if (typeof x === 'string') return (this.exact.has(x) ? WITHHELD : this.secrets.reduce((t, s) => t.replaceAll(s, WITHHELD), x as string)) as T;
    if (typeof x === 'number' && (this.exact.has(String(x)) || this.secrets.includes(String(x)))) return WITHHELD as T;
    if (Array.isArray(x)) return x.map((v) => this.masked(v)) as T;
    if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, this.masked(v)])) as T;
    return x;
  }

  start(name: string, file: string): void {
    this.line({ event: 'workflow', name, file }, `🚀 Executing Workflow: ${name} (${file})`);
  }

  note(text: string): void {
    this.line({ event: 'note', text }, `note: ${text}`);
  }

  starting(names: string[], home: string): void {
    this.line({ event: 'starting', nodes: names, home }, `Starting ${names.length} node${names.length === 1 ? '' : 's'} (${names.join(', ')}) in ${home} ...`);
  }

  ready(nodes: RunSummary['nodes'], ms: number): void {
    this.line({ event: 'nodes', nodes, ms }, `✓ ${nodes.length} node${nodes.length === 1 ? '' : 's'} ready in ${secs(ms)}: ${nodes.map((n) => `${n.name} ${n.url}`).join(', ')}`);
  }

  nodeExited(name: string, how: string): void {
    this.line({ event: 'node_exited', node: name, how }, `⚠️  node ${name} ${how}`);
  }

  stepStart(step: string, name: string, type: string, node?: string): void {
    this.line({ event: 'step', step, name, type, node }, `\nExecuting ${name} (${type}) [step ${step}${node ? ` on ${node}` : ''}]...`);
  }

  progress(step: string, text: string): void {
    this.line({ event: 'progress', step, text }, `  ${text}`);
  }

  /** `secret`: the output is marked `secret: true`; the value is withheld from here on. */
  exported(step: string, name: string, value: unknown, secret = false): void {
    if (secret) this.secret(value);
    // masked before `shown` cuts it: a cut secret would no longer match its whole text
    this.line({ event: 'exported', step, name, value }, `  📝 ${name} = ${shown(this.masked(value))}`);
  }

  exportMissing(step: string, name: string, field: string, available: string[]): void {
    this.line({ event: 'export_missing', step, name, field }, `  ⚠️  Export failed: '${field}' not found for ${name} (available: ${available.slice(0, 8).join(', ') || 'none'})`);
  }

  stepEnd(r: StepRecord): void {
    const human =
      r.status === 'failed'
        ? [`✗ Step '${r.name}' failed (${secs(r.ms)}): ${r.error}`, ...(r.request ? [`  request: ${r.request}`, `  answer:  ${r.answer}`] : [])].join('\n')
        : `✓ Step '${r.name}' ${r.status === 'expected_failure' ? `failed as expected (${r.error}) ` : 'completed '}(${secs(r.ms)})`;
    this.line({ event: 'step_done', ...r }, human);
  }

  /** --keep: where the nodes are and how to log in to them (the user's own terminal; as `hearth dev` shows its admin). */
  kept(nodes: RunSummary['nodes'], home: string, admin: { username: string; password: string }): void {
    this.line(
      { event: 'kept', nodes, home, admin },
      [`\nThe nodes keep running (--keep); Ctrl-C stops them:`, ...nodes.map((n) => `  ${n.name}  ${n.url}/admin-api`), `  homes: ${home}`, `  admin: ${admin.username} / ${admin.password}`].join('\n'),
    );
  }

  summary(s: RunSummary): void {
    if (this.json) {
      this.out.write(`${JSON.stringify(this.masked(s))}\n`);
      return;
    }
    const passed = s.steps.filter((r) => r.status !== 'failed').length;
    const lines: string[] = [];
    if (s.ok) {
      lines.push(`\n🎉 Workflow '${s.workflow}' completed successfully!`);
      const values = Object.entries(s.exported);
      if (values.length) lines.push('\n📋 Captured Dynamic Values:', ...values.map(([k, v]) => `  ${k}: ${shown(this.masked(v))}`));
      lines.push(`\nsummary: ${passed} step${passed === 1 ? '' : 's'} passed, 0 failed on ${s.nodes.length} node${s.nodes.length === 1 ? '' : 's'} in ${secs(s.durationMs)} (nodes ready in ${secs(s.nodesStartMs)})`);
    } else {
      const f = s.failed;
      lines.push(`\n❌ Workflow '${s.workflow}' failed${f ? ` at step ${f.step} '${f.name}' (${f.type})` : ''}`);
      lines.push(`summary: ${passed} step${passed === 1 ? '' : 's'} passed, 1 failed in ${secs(s.durationMs)}`);
    }
    this.out.write(`${this.masked(lines.join('\n'))}\n`);
  }
}
