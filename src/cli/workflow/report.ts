/**
 * What `hearth workflow run` prints, as merobox prints a run: each step's name and type as it
 * starts, its progress, the values it exported, pass or fail with its time, and a summary line.
 * For people (the default) these are lines on stdout as they happen; with `--output json` each is
 * one JSON line on stderr (for CI logs) and stdout gets one JSON document: the whole run.
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
const shown = (v: unknown) => {
  const t = textOf(v);
  return t.length > 100 ? `${t.slice(0, 97)}...` : t;
};

export class Reporter {
  constructor(
    private readonly json: boolean,
    private readonly out: NodeJS.WritableStream = process.stdout,
    private readonly err: NodeJS.WritableStream = process.stderr,
  ) {}

  private line(event: Record<string, unknown>, human: string): void {
    if (this.json) this.err.write(`${JSON.stringify(event)}\n`);
    else this.out.write(`${human}\n`);
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

  exported(step: string, name: string, value: unknown): void {
    this.line({ event: 'exported', step, name, value }, `  📝 ${name} = ${shown(value)}`);
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
      this.out.write(`${JSON.stringify(s)}\n`);
      return;
    }
    const passed = s.steps.filter((r) => r.status !== 'failed').length;
    const lines: string[] = [];
    if (s.ok) {
      lines.push(`\n🎉 Workflow '${s.workflow}' completed successfully!`);
      const values = Object.entries(s.exported);
      if (values.length) lines.push('\n📋 Captured Dynamic Values:', ...values.map(([k, v]) => `  ${k}: ${shown(v)}`));
      lines.push(`\nsummary: ${passed} step${passed === 1 ? '' : 's'} passed, 0 failed on ${s.nodes.length} node${s.nodes.length === 1 ? '' : 's'} in ${secs(s.durationMs)} (nodes ready in ${secs(s.nodesStartMs)})`);
    } else {
      const f = s.failed;
      lines.push(`\n❌ Workflow '${s.workflow}' failed${f ? ` at step ${f.step} '${f.name}' (${f.type})` : ''}`);
      lines.push(`summary: ${passed} step${passed === 1 ? '' : 's'} passed, 1 failed in ${secs(s.durationMs)}`);
    }
    this.out.write(`${lines.join('\n')}\n`);
  }
}
