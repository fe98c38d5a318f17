/**
 * `POST /contexts/{contextId}/intents` without HTTP (admin spec "Delegated execution"; reference
 * `perform_intent.rs`; domain.md §4.7): this node, as a relay, runs one method for a member under
 * the member's warrant, through the same execution path as JSON-RPC (the same commit, the same
 * `StateMutation`), with the member as the run's principal (`executorId` = the author's account) and
 * the change attributed to the author's device, the warrant recorded on the delta.
 *
 * Order of checks, each naming what is wrong:
 * 1. the request and the delegation decode and are authentic (400), for this context (403);
 * 2. the warrant's nonce is fresh for (context, author device) in this node's ledger (400);
 * 3. from here on the nonce is spent whatever happens — persisted with the delta on success, alone
 *    on a refusal or a failed call: the warrant covers this method and arguments (403), is not
 *    expired (403), names exactly this node's `executorAccount`, `executorKey`, `releaseBytecodeId`
 *    and `releaseVersion` (403; the spec: "otherwise it is refused and its nonce is spent"), this
 *    node may act for members here (403), and the author is a writing member whose device is not
 *    revoked (403);
 * 4. the call runs; a failing method is a 400 with `type: "FunctionCallError"`, as query's.
 */
import type { NodeIdentity } from '../identity/identity.ts';
import type { ApplicationCatalog } from '../applications/index.ts';
import { Serial } from '../serial.ts';
import type { Clock } from '../clock.ts';
import { unixSecs } from '../clock.ts';
import {
  ContextGone,
  type ContextMeta,
  type Contexts,
  decodeOutput,
  encodeArgs,
  methodNameProblem,
  readOnlyOf,
  releaseOf,
  UNINITIALIZED_HASH,
} from '../contexts/index.ts';
import { badRequest, conflict, forbidden, notFound } from '../errors.ts';
import { isMember, requireAuthorship } from '../governance/index.ts';
import type { Space, Store } from '../store/store.ts';
import { requireFresh, spend, type NonceLedger } from './nonces.ts';
import { authenticate, requireDeviceNotRevoked, requireExecutor, requireNotExpired } from './verify.ts';
import { decodeIntentWarrant, intentHash, type IntentWarrant } from './warrants.ts';

export interface PerformIntentRequest {
  method: unknown;
  argsJson?: unknown;
  warrant: unknown;
  authorProof: unknown;
}

export interface IntentServiceDeps {
  store: Store;
  contexts: Contexts;
  applications: ApplicationCatalog;
  identity: NodeIdentity;
  clock: Clock;
}

export class IntentService {
  /** `deleg.nonces`: `<context>/<author device key>` → the spent-nonce window (node-local) */
  private readonly nonces: Space<NonceLedger>;
  private readonly serials = new Map<string, Serial>();

  constructor(private readonly d: IntentServiceDeps) {
    this.nonces = d.store.space<NonceLedger>('deleg.nonces');
  }

  async perform(contextId: string, req: PerformIntentRequest): Promise<{ rootHash: string; returns: unknown }> {
    const problem = methodNameProblem(req.method);
    if (problem) throw badRequest(`Invalid request: body.${problem}`);
    const method = req.method as string;
    const args = encodeArgs(req.argsJson);
    if (typeof args === 'string') throw badRequest(`Invalid request: body.${args}`);
    const { warrant: w } = authenticate(req.warrant, req.authorProof, decodeIntentWarrant);
    const { contexts } = this.d;
    const meta = await contexts.contexts.requireMeta(contextId);
    if (w.context !== contextId) throw forbidden('this warrant authorises a different context than the one it was presented in');

    // One warrant at a time per context: the nonce check and its spending cannot interleave.
    return this.serial(contextId).run(async () => {
      const key = `${contextId}/${w.authorDeviceKey}`;
      const ledger = await this.nonces.get(key);
      requireFresh(ledger, w.nonce);
      const spent = this.nonces.putOp(key, spend(ledger, w.nonce));
      const refuse = async (err: Error): Promise<never> => {
        await this.d.store.batch([spent]);
        throw err;
      };

      if (w.method !== method || w.intentHash !== intentHash(method, args)) {
        return refuse(forbidden('this warrant does not cover the intent presented with it: it commits to a different method or arguments'));
      }
      let checked: { readOnly: boolean; executorKey: string };
      try {
        checked = await this.check(w, meta, contextId, method);
      } catch (err) {
        return refuse(err as Error);
      }
      let outcome;
      try {
        outcome = await contexts.executor.call(
          contextId,
          {
            method,
            input: args,
            executorId: w.authorAccount,
            deviceId: w.authorDeviceKey,
            readOnly: checked.readOnly,
            delegation: { warrant: (req.warrant as string).trim().toLowerCase(), executorKey: checked.executorKey },
            // the spent nonce goes with the call's outcome: in its commit, or alone when it fails
            extra: [spent],
          },
          () => undefined,
        );
      } catch (err) {
        if (err instanceof ContextGone) return refuse(notFound('Context not found'));
        throw err;
      }
      if (!outcome.result.ok) throw badRequest(outcome.result.message, { body: { type: 'FunctionCallError' } });
      const decoded = decodeOutput(outcome.result.output);
      return { rootHash: outcome.meta.rootHash, returns: decoded.ok ? decoded.value : null };
    });
  }

  /** Step 3 of the module header: every refusal after the nonce check spends it. */
  private async check(w: IntentWarrant, meta: ContextMeta, contextId: string, method: string): Promise<{ readOnly: boolean; executorKey: string }> {
    const { contexts, identity } = this.d;
    requireNotExpired(w, unixSecs(this.d.clock));
    const release = await releaseOf(this.d.applications, meta);
    const executorKey = (await contexts.contexts.executorKey(contextId)) ?? identity.publicKey;
    requireExecutor(w, identity.accountId, executorKey);
    if (!release || w.releaseBytecodeId !== release.bundleBlobId || w.releaseVersion !== release.version) {
      throw forbidden(`this warrant names release ${w.releaseVersion} (${w.releaseBytecodeId}); the context runs ${release ? `${release.version} (${release.bundleBlobId})` : 'no installed release'}`);
    }
    const reg = contexts.contexts.registration(contextId, meta.groupId);
    if (!reg) throw forbidden('this context belongs to no group, so no one may act in it for a member');
    requireAuthorship(reg.ns, reg.group, identity.accountId);
    if (!isMember(reg.ns, reg.group, w.authorAccount)) throw forbidden(`the author ${w.authorAccount} is not a member of the group owning this context`);
    requireDeviceNotRevoked(reg.ns.deviceBindings?.[w.authorAccount], w);
    const role = reg.group.members[w.authorAccount]?.role;
    const readOnly = (await readOnlyOf(this.d.applications, meta)).has(method);
    if (!readOnly && (role === 'ReadOnly' || role === 'ReadOnlyTee')) throw forbidden(`the author ${w.authorAccount} is read-only in this group`);
    if (meta.rootHash === UNINITIALIZED_HASH) throw conflict(`context '${contextId}' has no state on this node yet; sync it first`);
    return { readOnly, executorKey };
  }

  private serial(contextId: string): Serial {
    let s = this.serials.get(contextId);
    if (!s) this.serials.set(contextId, (s = new Serial()));
    return s;
  }
}
