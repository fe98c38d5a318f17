/**
 * `GET`/`POST /groups/{groupId}/context-intents` and `…/governance-intents` without HTTP (admin
 * spec "Delegated creation and governance"; admin-wire-b §8.2–§8.5): this node, as a relay, creates
 * a context or publishes a governance op for a member under the member's warrant.
 *
 * The relay checks what only it can (the warrant names this node and this group, covers these
 * `initArgs` or this op, has not expired) and what makes a clear refusal before doing any work; the
 * delegated op's applier (ops.ts) then re-checks the delegation on every node, spends the nonce and
 * applies the member's op with the member's own authority — so the member's missing capability is
 * a 403 from the applier, in the same words as when the member acts itself.
 */
import type { NodeIdentity } from '../identity/identity.ts';
import type { Clock } from '../clock.ts';
import { unixSecs } from '../clock.ts';
import { type Contexts, encodeArgs, MAX_INIT_PARAMS_BYTES, requireMayCreateContext } from '../contexts/index.ts';
import { badRequest, forbidden, HearthError } from '../errors.ts';
import { authorshipGrant, type Governance, requireAuthorship } from '../governance/index.ts';
import { decodeDelegableOp } from './delegable.ts';
import { requireFresh } from './nonces.ts';
import { DELEGATED_OPS, nonceKey } from './ops.ts';
import { authenticate, requireExecutor, requireNotExpired } from './verify.ts';
import { decodeCreationWarrant, decodeGovernanceWarrant, hexField, initHash, opHash } from './warrants.ts';

export interface GroupIntentDeps {
  governance: Governance;
  contexts: Contexts;
  identity: NodeIdentity;
  clock: Clock;
}

export interface CreateContextIntentRequest {
  warrant: unknown;
  authorProof: unknown;
  initArgs?: unknown;
}

export interface GovernanceIntentRequest {
  warrant: unknown;
  authorProof: unknown;
  op: unknown;
}

const lower = (v: unknown) => (v as string).trim().toLowerCase();

export class GroupIntentService {
  constructor(private readonly d: GroupIntentDeps) {}

  /** ContextIntentRelayInfo (admin-wire-b §8.2); `authorMayCreate` only when `author` is given. */
  contextRelayInfo(groupId: string, author?: string) {
    const { ns, group } = this.d.governance.requireGroup(groupId);
    const me = this.d.identity;
    let authorMayCreate: boolean | undefined;
    if (author !== undefined) {
      try {
        requireMayCreateContext(ns, group, author);
        authorMayCreate = true;
      } catch (err) {
        if (!(err instanceof HearthError)) throw err;
        authorMayCreate = false;
      }
    }
    return {
      executorAccount: me.accountId,
      executorKey: me.publicKey,
      groupId: group.id,
      canCreateOnBehalf: authorshipGrant(ns, group, me.accountId) !== undefined,
      ...(authorMayCreate !== undefined ? { authorMayCreate } : {}),
    };
  }

  /** GovernanceIntentRelayInfo (admin-wire-b §8.4, with the rc.83 SDK's `executorKey`). */
  governanceRelayInfo(groupId: string) {
    const { ns, group } = this.d.governance.requireGroup(groupId);
    const me = this.d.identity;
    return { executorAccount: me.accountId, executorKey: me.publicKey, groupId: group.id, canActOnBehalf: authorshipGrant(ns, group, me.accountId) !== undefined };
  }

  async createContext(groupId: string, req: CreateContextIntentRequest): Promise<{ contextId: string; groupId: string; memberPublicKey: string }> {
    const { warrant: w } = authenticate(req.warrant, req.authorProof, decodeCreationWarrant);
    const { ns, group } = this.d.governance.requireGroup(groupId);
    const me = this.d.identity;
    if (w.group !== group.id) throw forbidden(`this warrant creates a context in group ${w.group}, not in ${group.id}`);
    requireExecutor(w, me.accountId, me.publicKey);
    const init = encodeArgs(req.initArgs);
    if (typeof init === 'string') throw badRequest(`Invalid request: body.initArgs: ${init.replace(/^argsJson /, '')}`);
    if (init.length > MAX_INIT_PARAMS_BYTES) throw badRequest(`initArgs exceeds ${MAX_INIT_PARAMS_BYTES} bytes once serialized`);
    if (initHash(init) !== w.initHash) throw forbidden('this warrant does not cover the initArgs presented with it');
    requireNotExpired(w, unixSecs(this.d.clock));
    if (w.applicationId !== group.targetApplicationId) {
      throw forbidden(`this warrant names application ${w.applicationId}; group ${group.id} runs ${group.targetApplicationId}`);
    }
    requireAuthorship(ns, group, me.accountId);
    requireFresh(ns.delegatedNonces?.[nonceKey(group.id, w.authorDeviceKey)], w.nonce);
    const created = await this.d.contexts.contexts.create({
      groupId: group.id,
      applicationId: w.applicationId,
      initializationParams: init,
      contextSeed: w.seed,
      ...(w.serviceName !== null ? { serviceName: w.serviceName } : {}),
      ...(w.name !== null ? { name: w.name } : {}),
      delegated: { author: w.authorAccount, kind: DELEGATED_OPS.contextRegistered, body: { warrant: lower(req.warrant), authorProof: lower(req.authorProof) } },
    });
    return { contextId: created.contextId, groupId: group.id, memberPublicKey: created.memberPublicKey };
  }

  async governance(groupId: string, req: GovernanceIntentRequest): Promise<{ groupId: string }> {
    const { warrant: w } = authenticate(req.warrant, req.authorProof, decodeGovernanceWarrant);
    const { ns, group } = this.d.governance.requireGroup(groupId);
    const me = this.d.identity;
    if (w.scope !== group.id) throw forbidden(`this warrant is scoped to ${w.scope}, not to ${group.id}`);
    if (w.kind === 'Root' && group.id !== ns.id) throw forbidden(`a Root op is scoped to its namespace (${ns.id}), not to a subgroup`);
    requireExecutor(w, me.accountId, me.publicKey);
    if (typeof req.op !== 'string') throw badRequest('op must be the hex of the delegable op');
    const bytes = hexField(req.op, 'op');
    if (opHash(w.kind, bytes) !== w.opHash) throw forbidden('this warrant does not cover the op presented with it');
    const inner = decodeDelegableOp(bytes, w.kind, w.scope);
    requireNotExpired(w, unixSecs(this.d.clock));
    await this.d.governance.submit(ns.id, inner.groupId, DELEGATED_OPS.governance, { warrant: lower(req.warrant), authorProof: lower(req.authorProof), op: lower(req.op) });
    return { groupId: inner.kind === 'group.created' ? (inner.body.groupId as string) : w.scope };
  }
}
