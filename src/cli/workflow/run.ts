/**
 * Runs a merobox workflow on local hearth nodes (merobox `run/executor.py` and `steps/base.py`,
 * `repeat.py`, `parallel.py`): check the whole file, start the nodes, run the steps in order —
 * `{{var}}` substituted, `outputs` exported, `expected_failure` honoured — and stop every node it
 * started at the end, on the first failing step, and on Ctrl-C (unless `--keep`).
 *
 * A step fails on the node's refusal, a JSON-RPC error, an assertion that does not hold, a timeout
 * or a node process that is gone; the run stops there and names the step with its last request
 * and answer. With `expected_failure: true` a failure is the pass condition (and `expected_error`
 * a text the error must contain); a step that then succeeds fails.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { UsageError } from '../exit.ts';
import { StepFailure, type Handler, type StepContext } from './context.ts';
import { startNodes, type LocalNode, type LocalNodes } from './nodes.ts';
import { loadWorkflow, type Step, type Workflow } from './parse.ts';
import { Reporter, type RunSummary, type StepRecord } from './report.ts';
import { APP_STEPS } from './steps/apps.ts';
import { CALL_STEPS, errorInfo } from './steps/calls.ts';
import { GOVERNANCE_STEPS } from './steps/governance.ts';
import { LOCAL_STEPS } from './steps/local.ts';
import { UPGRADE_STEPS } from './steps/upgrades.ts';
import { extractPath, parseJsonLike, substitute, substituteDeep, textOf, type Values } from './values.ts';

const HANDLERS: Record<string, Handler> = { ...APP_STEPS, ...GOVERNANCE_STEPS, ...CALL_STEPS, ...UPGRADE_STEPS, ...LOCAL_STEPS };

/** Keys a step reads itself, placeholders and all (statements resolve per operand; nested steps per run). */
const RAW_KEYS: Record<string, string[]> = { assert: ['statements'], json_assert: ['statements'], repeat: ['steps'], parallel: ['groups'] };

export interface RunOptions {
  file: string;
  keep?: boolean;
  nodesDir?: string;
  json?: boolean;
  out?: NodeJS.WritableStream;
  err?: NodeJS.WritableStream;
}

/** The first step that failed, as the command's one-line error names it. */
export class StepFailed extends Error {
  override name = 'StepFailed';
  constructor(readonly record: StepRecord) {
    super(`step ${record.step} "${record.name}" (${record.type}) failed: ${record.error}${record.request ? `; request: ${record.request}; answer: ${record.answer}` : ''}`);
  }
}

/**
 * Copies the fields `outputs` names from a response into the values (merobox `_export_custom_outputs`).
 * `{field, …, secret: true}` (hearth's addition) tells `report` the value is a secret, to withhold.
 */
export function exportOutputs(outputs: unknown, response: unknown, values: Values, report?: { exported(n: string, v: unknown, secret: boolean): void; missing(n: string, f: string, a: string[]): void }): Values {
  const exported: Values = {};
  if (!outputs || typeof outputs !== 'object') return exported;
  const data = response && typeof response === 'object' && !Array.isArray(response) && 'data' in response && !('success' in response) ? (response as Values).data : response;
  const fields = data && typeof data === 'object' ? Object.keys(data) : [];
  for (const [name, src] of Object.entries(outputs as Record<string, unknown>)) {
    let value: unknown;
    let target = name;
    let field: string;
    let secret = false;
    if (typeof src === 'string') {
      field = src;
      value = src.includes('.') ? extractPath(data, src) : data && typeof data === 'object' ? (data as Values)[src] : undefined;
      if (typeof value === 'string' && !src.includes('.')) value = parseJsonLike(value);
    } else {
      const spec = src as { field: string; json?: boolean; path?: string; target?: string; secret?: boolean };
      field = spec.field;
      secret = spec.secret === true;
      value = data && typeof data === 'object' ? (data as Values)[spec.field] : undefined;
      if (spec.json) value = parseJsonLike(value);
      if (typeof spec.path === 'string') value = extractPath(value, spec.path);
      if (typeof spec.target === 'string') target = spec.target;
    }
    if (value === undefined) {
      report?.missing(target, field, fields);
      continue;
    }
    values[target] = value;
    exported[target] = value;
    report?.exported(target, value, secret);
  }
  return exported;
}

function resolveStep(step: Step, values: Values): Step {
  const raw = new Set(['outputs', ...(RAW_KEYS[step.type] ?? [])]);
  return Object.fromEntries(Object.entries(step).map(([k, v]) => [k, raw.has(k) ? v : substituteDeep(v, values)])) as Step;
}

export async function runWorkflow(opts: RunOptions): Promise<RunSummary> {
  const wf = await loadWorkflow(opts.file);
  const report = new Reporter(opts.json === true, opts.out, opts.err);
  report.start(wf.name, opts.file);
  for (const note of wf.notes) report.note(note);

  let home: string;
  let temporary = false;
  if (opts.nodesDir) {
    home = resolve(opts.nodesDir);
    const taken = wf.nodeNames.map((n) => join(home, n)).find((p) => existsSync(p));
    if (taken) throw new UsageError(`--nodes-dir ${opts.nodesDir} already holds a node home (${taken}); pass an empty or new folder`);
    await mkdir(home, { recursive: true });
  } else {
    home = await mkdtemp(join(tmpdir(), 'hearth-workflow-'));
    temporary = true;
  }

  const steps: StepRecord[] = [];
  const values: Values = { ...wf.variables };
  const started = Date.now();
  const abort = new AbortController();
  let local: LocalNodes | undefined;
  let stopNodes: (() => Promise<void>) | undefined;
  // one cleanup, however many paths ask for it: each waits until every node has stopped
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await stopNodes?.();
      if (temporary) await rm(home, { recursive: true, force: true }).catch(() => undefined);
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    abort.abort(new StepFailure(`interrupted by ${signal}`));
    report.note(`${signal}: stopping the nodes`);
    // the shell's code for a run ended by the signal, once the nodes are gone
    void cleanup().then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let nodesStartMs = 0;
  let failed: StepRecord | null = null;
  try {
    report.starting(wf.nodeNames, home);
    const t0 = Date.now();
    local = await startNodes({ names: wf.nodeNames, root: home, deadlineS: wf.waitTimeout, logSink: opts.err ?? process.stderr, onExit: (n, how) => report.nodeExited(n.name, how), onStopper: (stop) => (stopNodes = stop) });
    nodesStartMs = Date.now() - t0;
    report.ready(nodeList(local), nodesStartMs);
    try {
      await new Runner(wf, local.nodes, report, steps, abort.signal).runSteps(wf.steps, values, '');
    } catch (err) {
      if (!(err instanceof StepFailed)) throw err;
      failed = err.record;
    }
    const summary: RunSummary = {
      workflow: wf.name,
      file: opts.file,
      ok: !failed,
      nodes: nodeList(local),
      home,
      nodesStartMs,
      durationMs: Date.now() - started,
      steps,
      exported: values,
      failed,
      notes: wf.notes,
    };
    report.summary(summary);
    if (opts.keep) {
      // the nodes stay up until Ctrl-C, which now ends the run normally
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      report.kept(nodeList(local), home, local.admin);
      await new Promise<void>((done) => {
        process.once('SIGINT', () => done());
        process.once('SIGTERM', () => done());
      });
    }
    // the command's error line quotes the step too: no secret in it either
    if (failed) throw new StepFailed(report.masked(failed));
    return summary;
  } finally {
    await cleanup();
    if (abort.signal.aborted) await new Promise(() => undefined); // the signal handler exits
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

const nodeList = (l: LocalNodes) => [...l.nodes.values()].map((n) => ({ name: n.name, url: n.url, pid: n.pid ?? null }));

class Runner {
  private key?: KeyObject;
  private readonly said = new Set<string>();

  constructor(
    private readonly wf: Workflow,
    private readonly nodes: Map<string, LocalNode>,
    private readonly report: Reporter,
    private readonly records: StepRecord[],
    private readonly signal: AbortSignal,
  ) {}

  private context(values: Values, path: string): StepContext {
    return {
      wf: this.wf,
      nodes: this.nodes,
      values,
      devKey: () => (this.key ??= generateKeyPairSync('ed25519').privateKey),
      noteOnce: (key, text) => {
        if (this.said.has(key)) return;
        this.said.add(key);
        this.report.note(text);
      },
      progress: (text) => this.report.progress(path, text),
      runSteps: (steps, v, prefix) => this.runSteps(steps, v, prefix),
      signal: this.signal,
    };
  }

  async runSteps(steps: Step[], values: Values, prefix: string): Promise<void> {
    for (let i = 0; i < steps.length; i++) await this.runStep(steps[i]!, values, `${prefix}${i + 1}`);
  }

  private async runStep(step: Step, values: Values, path: string): Promise<void> {
    const name = displayName(step, values, path);
    const node = typeof step.node === 'string' ? step.node : undefined;
    this.report.stepStart(path, name, step.type, node);
    const t0 = Date.now();
    const record: StepRecord = { step: path, name, type: step.type, ...(node ? { node } : {}), status: 'passed', ms: 0, exported: {} };
    const exportTo = (response: unknown) =>
      exportOutputs(step.outputs, response, values, {
        exported: (n, v, secret) => this.report.exported(path, n, v, secret),
        missing: (n, f, a) => this.report.exportMissing(path, n, f, a),
      });
    const before = node ? this.nodes.get(node)?.last : undefined;
    try {
      const response = await this.execute(step, values, path);
      if (step.expected_failure === true) throw new StepFailure('expected this step to fail (expected_failure: true), but it succeeded', response);
      // a repeat's outputs name iteration variables, exported inside each iteration
      if (step.type !== 'repeat') record.exported = exportTo(response);
    } catch (err) {
      if (this.signal.aborted) throw err;
      if (err instanceof StepFailed) {
        // a nested step failed: this repeat/parallel fails with it, and the run names the nested one
        Object.assign(record, { status: 'failed', ms: Date.now() - t0, error: `step ${err.record.step} failed` });
        this.records.push(record);
        this.report.stepEnd(record);
        throw err;
      }
      const message = messageOf(err);
      const expected = step.expected_failure === true && !(err instanceof StepFailure && /but it succeeded$/.test(err.message));
      const matches = typeof step.expected_error !== 'string' || message.includes(step.expected_error);
      if (expected && matches) {
        record.status = 'expected_failure';
        record.error = message;
        record.exported = exportTo(errorInfo(err));
      } else {
        record.status = 'failed';
        record.error = expected ? `failed as expected, but the error does not contain "${step.expected_error}": ${message}` : message;
        const last = node ? this.nodes.get(node)?.last : undefined;
        if (last && last !== before) Object.assign(record, last);
        const gone = node ? this.nodes.get(node)?.exited : undefined;
        if (gone && !record.error.includes(gone)) record.error += ` (node ${node} ${gone})`;
      }
    }
    record.ms = Date.now() - t0;
    this.records.push(record);
    this.report.stepEnd(record);
    if (record.status === 'failed') throw new StepFailed(record);
  }

  private async execute(step: Step, values: Values, path: string): Promise<unknown> {
    if (step.type === 'repeat') return this.repeat(step, values, path);
    if (step.type === 'parallel') return this.parallel(step, values, path);
    const handler = HANDLERS[step.type];
    if (!handler) throw new StepFailure(`no handler for ${step.type}`);
    return handler(resolveStep(step, values), this.context(values, path));
  }

  /** merobox repeat: each iteration sees its own copy of the values plus the iteration variables. */
  private async repeat(step: Step, values: Values, path: string): Promise<unknown> {
    const count = Number(step.count);
    const nested = step.steps as Step[];
    for (let i = 0; i < count; i++) {
      const own: Values = { ...values, iteration: i + 1, iteration_index: i, iteration_zero_based: i, iteration_one_based: i + 1, total_iterations: count, step_count: nested.length };
      for (const [name, src] of Object.entries((step.outputs as Record<string, unknown>) ?? {})) {
        if (typeof src === 'string' && src in own) own[name] = own[src];
      }
      this.report.progress(path, `📋 Iteration ${i + 1}/${count}`);
      await this.runSteps(nested, own, `${path}.${i + 1}.`);
    }
    return { iterations: count };
  }

  /** merobox parallel: the groups run at once, each its steps in order; fail-slow by default. */
  private async parallel(step: Step, values: Values, path: string): Promise<unknown> {
    const groups = step.groups as { name?: string; steps: Step[] }[];
    const failFast = step.failure_mode === 'fail-fast';
    const runs = groups.map((g, i) => this.runSteps(g.steps, values, `${path}.${g.name ?? i + 1}.`));
    if (failFast) await Promise.all(runs);
    const failures = (await Promise.allSettled(runs)).filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    // the first group's failure is the one the run names (each failing group reported its own)
    if (failures.length) throw failures[0]!.reason;
    return { groups: groups.length };
  }
}


/** The step's name with its placeholders filled in where they can be (`Set key {{iteration}}` → `Set key 2`). */
function displayName(step: Step, values: Values, path: string): string {
  if (typeof step.name !== 'string') return `Step ${path}`;
  try {
    return textOf(substitute(step.name, values));
  } catch {
    return step.name;
  }
}

function messageOf(err: unknown): string {
  if (err instanceof StepFailed) return err.record.error ?? err.message;
  return err instanceof Error ? err.message.split('\n')[0]! : String(err);
}
