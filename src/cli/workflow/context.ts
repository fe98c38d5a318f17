/**
 * What a step handler sees (the runner builds it): the workflow, its nodes, the values exported
 * so far, and helpers shared by the step modules. A handler receives its step with every
 * `{{var}}` already substituted and answers the response its `outputs` read from.
 */
import type { KeyObject } from 'node:crypto';
import type { Client } from '../../client/index.ts';
import type { LocalNode } from './nodes.ts';
import type { Step, Workflow } from './parse.ts';
import type { Values } from './values.ts';

export interface StepContext {
  wf: Workflow;
  nodes: Map<string, LocalNode>;
  values: Values;
  /** the run's development signing key (made on first use) for `dev: true` raw `.wasm` installs */
  devKey(): KeyObject;
  /** says something once per run (e.g. how a raw `.wasm` is installed) */
  noteOnce(key: string, text: string): void;
  /** progress inside a long step */
  progress(text: string): void;
  /** runs nested steps (repeat, parallel) with these values; `path` numbers them */
  runSteps(steps: Step[], values: Values, path: string): Promise<void>;
  signal: AbortSignal;
}

export type Handler = (step: Step, ctx: StepContext) => Promise<unknown>;

/** A step's failure that is not an error of the node's (an assertion, a timeout, a script's exit). */
export class StepFailure extends Error {
  override name = 'StepFailure';
  constructor(
    message: string,
    readonly detail?: unknown,
  ) {
    super(message);
  }
}

/** The node a step names, refusing one whose process is gone. */
export function nodeOf(ctx: StepContext, name: unknown): LocalNode {
  const node = ctx.nodes.get(String(name));
  if (!node) throw new StepFailure(`no node "${String(name)}" in this workflow`);
  if (node.exited) throw new StepFailure(`node ${node.name} ${node.exited}; it cannot run this step`);
  return node;
}

export const clientOf = (ctx: StepContext, step: Step): Client => nodeOf(ctx, step.node).client;

export const str = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** `namespace_id`, or merobox's deprecated alias `group_id`. */
export const namespaceOf = (step: Step): string => str(step.namespace_id ?? step.group_id);

/** Sleeps, ending early with the run's signal. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
