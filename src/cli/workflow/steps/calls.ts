/**
 * Method calls and convergence (merobox `steps/execute.py`, `wait_for_sync.py`).
 *
 * `call` runs a method of a context's application on one node over JSON-RPC; its response is the
 * JSON-RPC response (`{jsonrpc, id, result: {output}}`), so `outputs: {r: result}` exports
 * `{output: …}` as merobox exports it. A JSON-RPC error fails the step (or passes it, with
 * `expected_failure`). `exec_type` function_call, contract_call and view_call all call the method.
 *
 * `wait_for_sync` polls every listed node until they report the same context state hash (and/or
 * group state hash), optionally asking each to sync first (`trigger_sync`, merobox's default) and
 * requiring a read (`expect: {method, args, equals}`) to answer `equals` on every node.
 */
import { RpcError } from '../../../client/index.ts';
import { clientOf, nodeOf, sleep, str, StepFailure, type Handler, type StepContext } from '../context.ts';
import type { Step } from '../parse.ts';
import { pyEqual } from '../values.ts';

const call: Handler = async (s, ctx) => {
  const client = clientOf(ctx, s);
  const args = (s.args as Record<string, unknown> | undefined) ?? {};
  const output = await client.rpc.execute(str(s.context_id), str(s.method), args, {
    ...(s.executor_public_key ? { executorPublicKey: str(s.executor_public_key) } : {}),
    signal: ctx.signal,
  });
  return { jsonrpc: '2.0', result: { output } };
};

/** The error fields merobox exports from a failed call (`error_code`, `error_type`, `error_message`). */
export function errorInfo(err: unknown): Record<string, unknown> {
  const e = err as Error & { status?: number; type?: string; data?: unknown; code?: number };
  const type = err instanceof RpcError ? e.type : e.name;
  return {
    success: false,
    expected: true,
    error_code: e.code ?? e.status ?? null,
    error_type: type ?? null,
    error_message: e.message,
    error: err instanceof RpcError ? { type: e.type, data: e.data ?? null } : e.message,
  };
}

interface NodeState {
  node: string;
  contextHash?: string;
  groupHash?: string;
  read?: unknown;
  problem?: string;
}

async function stateOf(ctx: StepContext, s: Step, name: string, trigger: boolean): Promise<NodeState> {
  const state: NodeState = { node: name };
  try {
    const client = nodeOf(ctx, name).client;
    const contextId = s.context_id === undefined ? undefined : str(s.context_id);
    if (trigger && contextId) await client.contexts.sync(contextId).catch(() => undefined);
    if (trigger && s.group_id !== undefined) await client.groups.sync(str(s.group_id)).catch(() => undefined);
    if (contextId) state.contextHash = (await client.contexts.get(contextId)).contextStateHash;
    if (s.group_id !== undefined) state.groupHash = (await client.groups.info(str(s.group_id))).groupStateHash ?? '';
    const expect = s.expect as { method: string; args?: Record<string, unknown> } | undefined;
    if (expect && contextId) state.read = await client.rpc.execute(contextId, expect.method, expect.args ?? {});
  } catch (err) {
    if (err instanceof StepFailure) throw err; // the node is gone: no point waiting for it
    state.problem = (err as Error).message;
  }
  return state;
}

const waitForSync: Handler = async (s, ctx) => {
  const nodes = (s.nodes as unknown[]).map(str);
  const timeoutS = typeof s.timeout === 'number' ? s.timeout : 30;
  const cap = typeof s.check_interval === 'number' ? s.check_interval * 1000 : 1000;
  let interval = typeof s.initial_check_interval === 'number' ? s.initial_check_interval * 1000 : 50;
  const factor = typeof s.backoff_factor === 'number' ? s.backoff_factor : 2;
  const maxAttempts = typeof s.retry_attempts === 'number' ? s.retry_attempts : Infinity;
  const trigger = s.trigger_sync !== false;
  const expect = s.expect as { equals: unknown } | undefined;
  const started = Date.now();
  let attempts = 0;
  let states: NodeState[] = [];
  while (attempts < maxAttempts && Date.now() - started < timeoutS * 1000) {
    attempts++;
    states = await Promise.all(nodes.map((n) => stateOf(ctx, s, n, trigger)));
    const same = (k: 'contextHash' | 'groupHash') => new Set(states.map((x) => x[k])).size === 1;
    const readsHold = !expect || states.every((x) => pyEqual(x.read, expect.equals));
    if (states.every((x) => !x.problem) && same('contextHash') && same('groupHash') && readsHold) {
      const elapsed = (Date.now() - started) / 1000;
      return {
        synced: true,
        root_hash: states[0]!.contextHash ?? states[0]!.groupHash,
        elapsed_seconds: Math.round(elapsed * 100) / 100,
        attempts,
        node_hashes: Object.fromEntries(states.map((x) => [x.node, x.contextHash ?? x.groupHash])),
      };
    }
    ctx.progress(`attempt ${attempts}: ${states.map((x) => `${x.node} ${x.problem ? `(${x.problem})` : (x.contextHash ?? x.groupHash ?? '').slice(0, 8)}`).join(', ')}`);
    await sleep(interval, ctx.signal);
    interval = Math.min(cap, interval * factor);
  }
  const detail = states.map((x) => `${x.node}: ${x.problem ?? `${x.contextHash ?? x.groupHash}${expect ? ` read ${JSON.stringify(x.read)}` : ''}`}`).join('; ');
  throw new StepFailure(`the nodes did not converge within ${timeoutS} s (${attempts} attempts${expect ? `, expecting ${JSON.stringify(expect.equals)}` : ''}): ${detail}`);
};

export const CALL_STEPS: Record<string, Handler> = { call, wait_for_sync: waitForSync };
