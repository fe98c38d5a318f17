/**
 * Reads and checks a merobox workflow file before any node starts (merobox `config.py`
 * `load_workflow_config` / `validate_workflow_config`, and the executor's node-reference check):
 * the YAML, the top-level shape, every step's type and keys (nested `repeat` and `parallel` steps
 * too), the nodes steps name, the `{{var}}`s each step uses (exported by an earlier step?), and the
 * local files steps read. Each problem is one line naming the file, the step and the fix.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { UsageError } from '../exit.ts';
import { errnoText } from '../../errno-text.ts';
import { IGNORED_NODE_KEYS, IGNORED_TOP_LEVEL, STEPS, TOP_LEVEL_KEYS, allowedKeys } from './schema.ts';
import { placeholders, placeholdersIn, type Values } from './values.ts';

export type Step = Record<string, unknown> & { type: string; name?: string };

export interface Workflow {
  file: string;
  dir: string;
  name: string;
  nodeNames: string[];
  /** container and merod settings the run ignores, one line each */
  notes: string[];
  steps: Step[];
  /** seconds every node has to start (merobox `wait_timeout`, default 60) */
  waitTimeout: number;
  /** top-level `variables:` */
  variables: Values;
}

/** The variables a `repeat` step gives its nested steps (merobox `repeat.py`). */
export const ITERATION_VARS = ['iteration', 'iteration_index', 'iteration_zero_based', 'iteration_one_based', 'total_iterations', 'step_count', 'current_step', 'current_step_index'];

const NODE_CONFIG_KEYS = new Set(['count', 'prefix', ...IGNORED_NODE_KEYS]);

export class WorkflowFileError extends UsageError {
  override name = 'WorkflowFileError';
}

/** A path a step names: relative to the workflow file's folder, else to the working directory. */
export async function localPath(wf: { dir: string }, path: string): Promise<string> {
  if (isAbsolute(path)) return path;
  const beside = resolve(wf.dir, path);
  try {
    await stat(beside);
    return beside;
  } catch {
    return resolve(path);
  }
}

/** Loads, parses and checks a workflow file; throws {@link WorkflowFileError} naming the first problem. */
export async function loadWorkflow(file: string): Promise<Workflow> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new WorkflowFileError(`cannot read the workflow ${file}: ${errnoText(err)}; check the path`);
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const where = e.linePos?.[0] ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
    const what = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new WorkflowFileError(`${file}: not valid YAML${where}: ${what}; fix the YAML syntax there`);
  }
  return checkWorkflow(file, doc.toJS() as unknown);
}

/** Checks a parsed workflow (exported for the unit tests). */
export async function checkWorkflow(file: string, raw: unknown): Promise<Workflow> {
  const problems: string[] = [];
  const top = (problem: string) => problems.push(`${file}: ${problem}`);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new WorkflowFileError(`${file}: a workflow is a YAML mapping with name, nodes and steps; this file holds ${Array.isArray(raw) ? 'a list' : typeof raw === 'object' ? 'nothing' : typeof raw}`);
  const cfg = raw as Record<string, unknown>;
  const notes: string[] = [];
  if (typeof cfg.name !== 'string' || !cfg.name) top('missing the workflow name; add name: <text> at the top');
  if (cfg.remote_nodes !== undefined) top('remote_nodes is not supported: hearth workflow run starts its own local nodes; remove remote_nodes and use nodes: {count: N}');
  if (cfg.topology !== undefined) top('topology (NAT and boot-node layouts) is not supported; remove topology');
  for (const key of Object.keys(cfg)) if (!TOP_LEVEL_KEYS.has(key)) notes.push(`ignoring the top-level key "${key}" (merobox does not read it either)`);
  const ignored = IGNORED_TOP_LEVEL.filter((k) => k in cfg);
  if (ignored.length) notes.push(`ignoring ${ignored.join(', ')}: container and merod settings with no meaning for local hearth processes`);
  if (cfg.stop_all_nodes === false) notes.push('stop_all_nodes: false is not followed: the run stops the nodes it started at the end (pass --keep to keep them)');

  const nodeNames = nodesOf(cfg.nodes, top, notes);
  let waitTimeout = 60;
  if (cfg.wait_timeout !== undefined) {
    if (!Number.isInteger(cfg.wait_timeout) || (cfg.wait_timeout as number) < 1) top('wait_timeout must be a whole number of seconds, at least 1');
    else waitTimeout = cfg.wait_timeout as number;
  }
  const variables: Values = {};
  if (cfg.variables !== undefined) {
    if (!cfg.variables || typeof cfg.variables !== 'object' || Array.isArray(cfg.variables)) top('variables must be a mapping of names to values');
    else Object.assign(variables, cfg.variables);
  }
  const steps = cfg.steps;
  if (!Array.isArray(steps) || steps.length === 0) top('steps must be a non-empty list of steps; add steps:');
  else {
    const known = new Set(Object.keys(variables));
    const wf = { file, dir: dirname(resolve(file)) };
    await checkSteps(steps, '', { wf, nodes: new Set(nodeNames), known, problems });
  }
  if (problems.length) throw new WorkflowFileError(problems[0]! + (problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : ''));
  return { file, dir: dirname(resolve(file)), name: cfg.name as string, nodeNames, notes, steps: steps as Step[], waitTimeout, variables };
}

function nodesOf(nodes: unknown, top: (p: string) => void, notes: string[]): string[] {
  if (Array.isArray(nodes)) {
    if (!nodes.length || !nodes.every((n) => typeof n === 'string' && n)) top('nodes as a list must name each node');
    return nodes as string[];
  }
  if (!nodes || typeof nodes !== 'object') {
    top('missing nodes; add nodes: {count: 2, prefix: calimero-node}');
    return [];
  }
  const n = nodes as Record<string, unknown>;
  const ignored = Object.keys(n).filter((k) => IGNORED_NODE_KEYS.includes(k));
  if (ignored.length) notes.push(`ignoring nodes.${ignored.join(', nodes.')}: container settings; hearth starts local node processes`);
  if ('count' in n) {
    if (!Number.isInteger(n.count) || (n.count as number) < 1 || (n.count as number) > 16) {
      top('nodes.count must be a whole number from 1 to 16');
      return [];
    }
    const prefix = typeof n.prefix === 'string' && n.prefix ? n.prefix : 'calimero-node';
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(prefix)) top(`nodes.prefix "${prefix}" must be letters, digits, ".", "_" or "-"`);
    return Array.from({ length: n.count as number }, (_, i) => `${prefix}-${i + 1}`);
  }
  // merobox's named form: every key that is not a setting is a node
  const names = Object.keys(n).filter((k) => !NODE_CONFIG_KEYS.has(k));
  if (!names.length) top('nodes names no node; add nodes: {count: 2}');
  return names;
}

interface Scope {
  wf: { file: string; dir: string };
  nodes: Set<string>;
  /** the variables exported so far */
  known: Set<string>;
  problems: string[];
}

const label = (path: string, step: Record<string, unknown>) => `step ${path}${typeof step.name === 'string' ? ` "${step.name}"` : ''}${typeof step.type === 'string' ? ` (${step.type})` : ''}`;

async function checkSteps(steps: unknown[], prefix: string, scope: Scope): Promise<void> {
  for (let i = 0; i < steps.length; i++) await checkStep(steps[i], `${prefix}${i + 1}`, scope);
}

async function checkStep(raw: unknown, path: string, scope: Scope): Promise<void> {
  const { file } = scope.wf;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    scope.problems.push(`${file}: step ${path} is not a mapping; write it as "- type: …" with its keys below`);
    return;
  }
  const step = raw as Record<string, unknown>;
  const bad = (problem: string): void => void scope.problems.push(`${file}: ${label(path, step)}: ${problem}`);
  const type = step.type;
  if (typeof type !== 'string' || !type) return bad('missing type; add type: <one of the step types in docs/workflows.md>');
  const spec = STEPS[type];
  if (!spec) return bad(`unknown step type "${type}"; use one of the step types in docs/workflows.md`);
  if (spec.unsupported) return bad(`hearth workflow run does not support ${type} (${spec.unsupported}); remove the step`);
  const allowed = allowedKeys(spec);
  for (const key of Object.keys(step)) {
    if (!allowed.has(key)) bad(`unknown key "${key}" — the step would ignore it; valid keys: ${[...allowed].sort().join(', ')}`);
  }
  for (const req of spec.required) {
    const any = req.split('|');
    if (!any.some((k) => step[k] !== undefined && step[k] !== null)) bad(`missing ${any.map((k) => `"${k}"`).join(' or ')}; add it`);
  }
  if (step.expected_error !== undefined && step.expected_failure !== true) bad('expected_error needs expected_failure: true; add it');
  if (step.outputs !== undefined) {
    const outs = step.outputs;
    if (!outs || typeof outs !== 'object' || Array.isArray(outs)) bad('outputs must map variable names to response fields');
    else {
      for (const [name, src] of Object.entries(outs)) {
        const okSrc = typeof src === 'string' || (src && typeof src === 'object' && typeof (src as { field?: unknown }).field === 'string');
        if (!okSrc) bad(`outputs.${name} must be a field name (a.b for nested) or {field: …}`);
        else if (typeof src === 'object' && 'secret' in src && typeof src.secret !== 'boolean') bad(`outputs.${name}.secret must be true or false`);
      }
    }
  }
  for (const key of ['node', 'context_node'] as const) {
    const node = step[key];
    if (typeof node === 'string' && !node.includes('{{') && !scope.nodes.has(node)) bad(`no node "${node}" in this workflow (it has ${[...scope.nodes].join(', ')}); name one of them`);
  }
  // merobox: "'requester' must be a string if provided" (an admin public key, forwarded to the node)
  if (step.requester !== undefined && typeof step.requester !== 'string') bad('requester must be a string: an admin public key (64 hex), or {{var}} holding one');
  checkTypeSpecific(type, step, bad, scope);

  // placeholders: exported by an earlier step (nested steps, statements and outputs are checked on their own)
  const own = Object.entries(step).filter(([k]) => !['steps', 'groups', 'outputs'].includes(k)).map(([, v]) => v);
  for (const name of new Set(placeholdersIn(own))) {
    if (!scope.known.has(name)) bad(`{{${name}}} is never exported before this step; export it with outputs: {${name}: <field>} on an earlier step`);
  }
  for (const key of ['path', 'file_path', 'script'] as const) {
    const p = step[key];
    if (typeof p === 'string' && !placeholders(p).length && !(key === 'path' && step.url)) {
      try {
        await stat(await localPath(scope.wf, p));
      } catch (err) {
        bad(`cannot read ${key} ${p}: ${errnoText(err)}; paths are read relative to the workflow file's folder, then the working directory`);
      }
    }
  }
  if (type === 'repeat' && Array.isArray(step.steps)) {
    const inner: Scope = { ...scope, known: new Set([...scope.known, ...ITERATION_VARS, ...Object.keys((step.outputs as object) ?? {})]) };
    // merobox runs each iteration on a copy of the values: what nested steps export stays inside
    await checkSteps(step.steps, `${path}.`, inner);
  }
  if (type === 'parallel' && Array.isArray(step.groups)) {
    for (let g = 0; g < step.groups.length; g++) {
      const group = step.groups[g] as { name?: unknown; steps?: unknown } | null;
      if (!group || typeof group !== 'object' || !Array.isArray(group.steps)) {
        bad(`groups[${g}] must be a mapping with steps: [...]`);
        continue;
      }
      await checkSteps(group.steps, `${path}.${typeof group.name === 'string' ? group.name : g + 1}.`, scope);
    }
  }
  if (type !== 'repeat' && step.outputs && typeof step.outputs === 'object') for (const name of Object.keys(step.outputs)) scope.known.add(name);
}

function checkTypeSpecific(type: string, step: Record<string, unknown>, bad: (p: string) => void, scope: Scope): void {
  const num = (key: string, min: number) => {
    const v = step[key];
    if (v !== undefined && (typeof v !== 'number' || !(v >= min))) bad(`${key} must be a number, at least ${min}`);
  };
  switch (type) {
    case 'wait':
      num('seconds', 0);
      break;
    case 'repeat':
      if (!Number.isInteger(step.count) || (step.count as number) < 1) bad('count must be a whole number, at least 1');
      if (!Array.isArray(step.steps) || !step.steps.length) bad('steps must be a non-empty list of steps');
      break;
    case 'parallel':
      if (!Array.isArray(step.groups) || !step.groups.length) bad('groups must be a non-empty list of {name, steps}');
      if (step.mode !== undefined && !['burst', 'sustained', 'mixed'].includes(step.mode as string)) bad('mode must be burst, sustained or mixed');
      break;
    case 'assert':
    case 'json_assert': {
      const st = step.statements;
      if (!Array.isArray(st) || !st.length) bad('statements must be a non-empty list');
      else {
        st.forEach((s, i) => {
          if (typeof s !== 'string' && !(s && typeof s === 'object' && typeof (s as { statement?: unknown }).statement === 'string')) bad(`statement #${i + 1} must be a string or {statement: …}`);
        });
      }
      break;
    }
    case 'wait_for_sync': {
      const nodes = step.nodes;
      if (!Array.isArray(nodes) || new Set(nodes).size < 2 || nodes.length !== new Set(nodes).size) bad('nodes must list at least two different nodes');
      else for (const n of nodes) if (typeof n === 'string' && !n.includes('{{') && !scope.nodes.has(n)) bad(`no node "${n}" in this workflow (it has ${[...scope.nodes].join(', ')}); name one of them`);
      num('timeout', 1);
      num('check_interval', 0.001);
      const expect = step.expect as Record<string, unknown> | undefined;
      if (expect !== undefined) {
        if (!expect || typeof expect !== 'object') bad('expect must be {method, args, equals}');
        else {
          const unknown = Object.keys(expect).filter((k) => !['method', 'args', 'equals'].includes(k));
          if (unknown.length) bad(`unknown key(s) in expect: ${unknown.join(', ')} (valid: args, equals, method)`);
          if (typeof expect.method !== 'string' || !expect.method) bad('expect.method must be a non-empty string');
          if (!('equals' in expect)) bad('expect.equals is required: the value the read must return on every node');
          if (step.context_id === undefined) bad('expect needs context_id: the read runs in that context');
        }
      }
      break;
    }
    case 'call':
      if (step.args !== undefined && (typeof step.args !== 'object' || step.args === null || Array.isArray(step.args))) bad('args must be a mapping');
      if (step.unauthenticated === true) bad('unauthenticated: true is not supported: the runner calls as its own admin; remove it');
      if (step.exec_type !== undefined && !['function_call', 'contract_call', 'view_call'].includes(step.exec_type as string)) bad('exec_type must be function_call, contract_call or view_call');
      break;
    case 'script':
      if (step.args !== undefined && !Array.isArray(step.args)) bad('args must be a list');
      break;
    case 'set_subgroup_visibility':
    case 'set_default_visibility':
      if (!['open', 'restricted', 'Open', 'Restricted'].includes(step.visibility as string)) bad('visibility must be open or restricted');
      break;
  }
}
