/**
 * Method calls on a context: JSON-RPC `execute` (admin-wire-a §7; runtime.md §3) and
 * `POST /contexts/{id}/query` (admin spec "Contexts" rule 1). Both encode `argsJson` as the
 * guest's input, run through the executor and decode the guest's return bytes as JSON.
 *
 * `execute` answers the reference's JSON-RPC error objects (RpcMethodError `{type, data}`);
 * `query` answers HTTP statuses: 403 outside the owning group, 409 for a method the ABI does not
 * mark read-only, 400 `type: "FunctionCallError"` when the method fails.
 */
import type { NodeIdentity } from '../identity/identity.ts';
import type { ApplicationCatalog } from '../applications/index.ts';
import { isBound, mayActOn, type Principal } from '../auth/index.ts';
import { JsonDepthError, parseJson, stringifyJson } from '../codec/json.ts';
import { parseId } from '../crypto/ids.ts';
import { badRequest, conflict, forbidden, notFound } from '../errors.ts';
import { isMember } from '../governance/index.ts';
import type { CallResult } from '../runtime/index.ts';
import { ContextGone, type ContextExecutor } from './executor.ts';
import { readOnlyNow, readOnlyOf } from './releases.ts';
import { RpcMethodError } from './rpc-methods.ts';
import type { ContextService } from './service.ts';
import type { ContextStore } from './store.ts';
import { MAX_ARGS_BYTES, MAX_METHOD_NAME, UNINITIALIZED_HASH, type ContextMeta } from './types.ts';

export interface ContextCallsDeps {
  store: ContextStore;
  executor: ContextExecutor;
  contexts: ContextService;
  identity: NodeIdentity;
  applications: ApplicationCatalog;
}

const CONTROL = /[\u0000-\u001f\u007f]/;
/** made once: a coder per call was a per-call cost of every `execute` (issue #33); neither keeps state between whole-buffer calls */
const UTF8 = new TextEncoder();
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The method name rule of admin-wire-a §7; the message names what is wrong. */
export function methodNameProblem(method: unknown): string | undefined {
  if (typeof method !== 'string') return 'method must be a string';
  if (method.length === 0 || method.length > MAX_METHOD_NAME) return `method must be 1-${MAX_METHOD_NAME} characters`;
  if (CONTROL.test(method)) return 'method must not contain control characters';
  // the host's own entry points (`__calimero_sync_next` merges a peer's delta, `__calimero_register_merge`):
  // a client calling them could inject state changes no member made
  if (method.startsWith('__calimero_')) return `method ${method} is reserved for the node (entry points named __calimero_* are not callable)`;
  return undefined;
}

/**
 * `argsJson` as the guest reads it: its UTF-8 JSON (u64 values exact); absent means `{}`. A string
 * names why it cannot be passed (too large, or nested past the JSON depth bound).
 */
export function encodeArgs(argsJson: unknown): Uint8Array | string {
  let text: string;
  try {
    text = stringifyJson(argsJson === undefined ? {} : argsJson);
  } catch (err) {
    if (err instanceof JsonDepthError) return `argsJson is nested deeper than ${err.limit} levels (the limit)`;
    throw err;
  }
  const bytes = UTF8.encode(text);
  return bytes.length > MAX_ARGS_BYTES ? `argsJson exceeds ${MAX_ARGS_BYTES} bytes once serialized` : bytes;
}

type Decoded = { ok: true; value: unknown } | { ok: false; message: string };

/** The guest's return bytes as JSON (null when it returned nothing). */
export function decodeOutput(output: Uint8Array | null): Decoded {
  if (output === null) return { ok: true, value: null };
  try {
    return { ok: true, value: parseJson(STRICT_UTF8.decode(output)) };
  } catch (err) {
    return { ok: false, message: `the method's return value is not JSON: ${(err as Error).message}` };
  }
}

/** `params.contextId` of a JSON-RPC call, or its ParseError. */
function rpcContextId(raw: unknown): string {
  const contextId = typeof raw === 'string' ? parseId(raw) : undefined;
  if (!contextId) throw new RpcMethodError('ParseError', 'params.contextId must be a context id (64 hex characters)');
  return contextId;
}

export class ContextCalls {
  constructor(private readonly d: ContextCallsDeps) {}

  /** JSON-RPC `execute`: `{contextId, method, argsJson}` → `{output}` or a typed RpcMethodError. */
  async execute(params: unknown, principal: Principal, signal?: AbortSignal): Promise<{ output: unknown }> {
    if (typeof params !== 'object' || params === null || Array.isArray(params)) throw new RpcMethodError('ParseError', 'params must be an object');
    const p = params as Record<string, unknown>;
    const contextId = rpcContextId(p.contextId);
    const problem = methodNameProblem(p.method);
    if (problem) throw new RpcMethodError('ParseError', `params.${problem}`);
    const method = p.method as string;
    const input = encodeArgs(p.argsJson);
    if (typeof input === 'string') throw new RpcMethodError('ParseError', `params.${input}`);

    // each lookup answers from memory without waiting when it can (issue #33), else reads
    const kept = this.d.store.metaNow(contextId);
    const meta = kept ? this.rpcAllowed(contextId, principal, kept.value) : await this.rpcMeta(contextId, principal);
    const apps = this.d.applications;
    if (!(apps.installedNow?.(meta.applicationId) ?? !!(await apps.get(meta.applicationId)))) {
      // the reference's `{application_id}`, and hearth's `message` saying what this node is doing about it
      const problem = this.d.contexts.applicationProblem(contextId);
      const message =
        problem?.reason === 'fetching_application'
          ? `application ${meta.applicationId} is being fetched from peers (bundle ${problem.bundleBlobId}); try again shortly`
          : (problem?.detail ?? `application ${meta.applicationId} is not installed on this node: install it with hearth app install-dev <bundle.mpk>`);
      throw new RpcMethodError('ApplicationNotInstalled', { application_id: meta.applicationId, message });
    }
    const keptKey = this.d.contexts.executorKeyNow(contextId);
    const deviceId = keptKey === null ? await this.d.contexts.executorKey(contextId) : keptKey;
    if (!deviceId) throw new RpcMethodError('FunctionCallError', 'No owned identity found for this context');
    const readOnly = (readOnlyNow(apps, meta) ?? (await readOnlyOf(apps, meta))).has(method);

    const result = await this.call(contextId, { method, input, executorId: this.d.identity.accountId, deviceId, readOnly, signal }, () => {
      throw new RpcMethodError('ContextNotFound', undefined);
    }, (m) => {
      if (m.rootHash === UNINITIALIZED_HASH) throw new RpcMethodError('Uninitialized', undefined);
    });
    if (!result.ok) throw new RpcMethodError('FunctionCallError', result.message);
    const decoded = decodeOutput(result.output);
    if (!decoded.ok) throw new RpcMethodError('SerdeError', { message: decoded.message });
    return { output: decoded.value };
  }

  /**
   * JSON-RPC `sync_status` (admin-wire-a §7): whether the context has state here and where its
   * sync stands. This node has no peers, so a context is `idle` once it has state and
   * `waitingForPeers` before.
   */
  async syncStatus(params: unknown, principal: Principal) {
    const contextId = rpcContextId(typeof params === 'object' && params !== null ? (params as Record<string, unknown>).contextId : undefined);
    const meta = await this.rpcMeta(contextId, principal);
    const isInitialized = meta.rootHash !== UNINITIALIZED_HASH;
    return { contextId, isInitialized, syncState: { state: isInitialized ? 'idle' : 'waitingForPeers' }, failureCount: 0 };
  }

  /**
   * `POST /contexts/{id}/query`: a read as the session's account. Every session on this node speaks
   * for the node's account (docs/contexts.md "Query"), so membership is that account's.
   */
  async query(contextId: string, method: string, argsJson: unknown, signal?: AbortSignal): Promise<{ output: unknown }> {
    const problem = methodNameProblem(method);
    if (problem) throw badRequest(`Invalid request: body.${problem}`);
    const input = encodeArgs(argsJson);
    if (typeof input === 'string') throw badRequest(`Invalid request: body.${input}`);
    const meta = await this.d.contexts.requireMeta(contextId);
    const account = this.d.identity.accountId;
    const reg = this.d.contexts.registration(contextId, meta.groupId);
    if (!reg || !isMember(reg.ns, reg.group, account)) {
      throw forbidden(`account ${account} is not a member of the group owning context '${contextId}'`);
    }
    const readOnly = await readOnlyOf(this.d.applications, meta);
    if (!readOnly.has(method)) throw conflict(`method '${method}' is not marked read-only in the application's ABI; call it with execute`);
    const deviceId = (await this.d.contexts.executorKey(contextId)) ?? this.d.identity.publicKey;

    const result = await this.call(contextId, { method, input, executorId: account, deviceId, readOnly: true, signal }, () => {
      throw notFound('Context not found');
    }, (m) => {
      if (m.rootHash === UNINITIALIZED_HASH) throw conflict(`context '${contextId}' has no state on this node yet; sync it first`);
    });
    if (!result.ok) throw badRequest(result.message, { body: { type: 'FunctionCallError' } });
    const decoded = decodeOutput(result.output);
    if (!decoded.ok) throw badRequest(decoded.message, { body: { type: 'FunctionCallError' } });
    return { output: decoded.value };
  }

  /**
   * The context a JSON-RPC call names, for this principal. A bound client key may act only inside
   * its binding (auth spec): the context id is in the body, so the guard could not check it.
   */
  private async rpcMeta(contextId: string, principal: Principal): Promise<ContextMeta> {
    return this.rpcAllowed(contextId, principal, await this.d.store.getMeta(contextId));
  }

  private rpcAllowed(contextId: string, principal: Principal, meta: ContextMeta | undefined): ContextMeta {
    if (isBound(principal.binding) && !mayActOn(principal.binding, { kind: 'context', id: contextId }, { contextApplication: meta?.applicationId })) {
      throw forbidden('This client key is bound to other contexts or groups', 'permission_denied');
    }
    if (!meta) throw new RpcMethodError('ContextNotFound', undefined);
    return meta;
  }

  private async call(
    contextId: string,
    input: Parameters<ContextExecutor['call']>[1],
    gone: () => never,
    prepare: (meta: ContextMeta) => void,
  ): Promise<CallResult> {
    try {
      return (await this.d.executor.call(contextId, input, prepare)).result;
    } catch (err) {
      if (err instanceof ContextGone) gone();
      throw err;
    }
  }
}
