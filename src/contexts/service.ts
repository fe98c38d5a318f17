/**
 * The contexts domain (admin spec "Contexts" table and rules, "States and transitions";
 * admin-wire-a §4): creating a context in a group (its registration is a governance op, its `init`
 * runs in the runtime), reading, deleting, joining and leaving it, its identities, its application,
 * sync and resync on a node without peers, and the delegated-execution relay information. Method
 * calls (JSON-RPC `execute`, `query`) are in `calls.ts`. No HTTP here.
 */
import type { NodeIdentity } from '../identity/identity.ts';
import type { ApplicationCatalog } from '../applications/index.ts';
import type { Clock } from '../clock.ts';
import { badRequest, conflict, forbidden, notFound, unavailable } from '../errors.ts';
import type { EventBus } from '../bus.ts';
import { authorshipGrant, type Governance, isMember, removedFrom, requireCapability } from '../governance/index.ts';
import type { Registration } from './types.ts';
import type { BatchOp } from '../store/store.ts';
import type { ContextExecutor } from './executor.ts';
import { keyFromSeed, parseSeed, randomKey } from '../crypto/seeded-keys.ts';
import { CONTEXT_OPS, groupHoldingContext, requireMayCreateContext } from './ops.ts';
import type { AppProblem, AppProblemReason } from './app-fetch.ts';
import { namedBundle } from './app-fetch.ts';
import { releaseForGroup, releaseOf } from './releases.ts';
import type { ContextStore } from './store.ts';
import { MAX_INIT_PARAMS_BYTES, UNINITIALIZED_HASH, type ContextMember, type ContextMeta } from './types.ts';

import type { BehindReason, SyncStatusFields } from '../wire/sync.ts';
import type { Context } from '../wire/contexts.ts';

export interface ContextServiceDeps {
  store: ContextStore;
  executor: ContextExecutor;
  governance: Governance;
  identity: NodeIdentity;
  applications: ApplicationCatalog;
  bus: EventBus;
  clock: Clock;
}

export interface CreateContextInput {
  groupId: string;
  applicationId?: string;
  initializationParams: Uint8Array;
  contextSeed?: string | null;
  identitySecret?: string | null;
  serviceName?: string;
  name?: string;
  /**
   * Created for a member under a warrant (src/delegation): `init` runs as the member's account and
   * the registration is published as the delegated op `kind` with `body` (the warrant it rests on).
   */
  delegated?: { author: string; kind: string; body: Record<string, unknown> };
}

/** admin spec "Context" (ContextWithGroup adds `groupId`): the wire's shape (src/wire/contexts.ts). */
export type ContextView = Context;

/** hearth's sync status of one context on this node (`GET /contexts/{id}/sync`; src/sync/status.ts). */
export type ContextSyncView = { contextId: string } & Omit<SyncStatusFields<BehindReason>, 'reasons'> & {
  /** sync's reasons, and first the application's when it is missing here (app-fetch.ts) */
  reasons: { reason: BehindReason | AppProblemReason; detail: string; at: string }[];
};

const toBytes = (h: string): number[] => [...Buffer.from(h, 'hex')];

/** What the contexts domain asks of context state sync (src/sync/service.ts), when the node has a network. */
export interface SyncPort {
  /** follows the context and pulls it from its peers; answers at once */
  syncNow(contextId?: string): void;
  /** the honest sync status of a context this node holds */
  view(contextId: string): Promise<SyncStatusFields<BehindReason>>;
  forget(contextId: string): void;
}

/** What the contexts domain asks of the application fetch (app-fetch.ts), when the node has a network. */
export interface AppFetchPort {
  ensure(contextId: string): void;
  problem(contextId: string): AppProblem | undefined;
}

export class ContextService {
  private syncer?: SyncPort;
  private appFetch?: AppFetchPort;

  constructor(private readonly d: ContextServiceDeps) {}

  /** Connects context state sync (the composition root does, once the network exists). */
  attachSync(syncer: SyncPort): void {
    this.syncer = syncer;
  }

  /** Connects the fetch of missing applications from members (app-fetch.ts). */
  attachAppFetch(fetch: AppFetchPort): void {
    this.appFetch = fetch;
  }

  /** Why the context's application cannot run here yet (being fetched, or no member serves it). */
  applicationProblem(contextId: string): AppProblem | undefined {
    return this.appFetch?.problem(contextId);
  }

  // ---- reading -------------------------------------------------------------------------------

  /** The group that has the context registered now (the governance registry is authoritative). */
  registration(contextId: string, hintGroupId?: string): Registration | undefined {
    const hinted = hintGroupId ? this.d.governance.locate(hintGroupId) : undefined;
    if (hinted?.group.contexts[contextId]) return hinted;
    for (const ns of this.d.governance.namespaces()) {
      const group = groupHoldingContext(ns, contextId);
      if (group) return { ns, group };
    }
    return undefined;
  }

  /**
   * 403 when an admin removed this node's account from the context's group (or an ancestor): the
   * context is read-only here, since no member node would take its writes (issue 23 §3).
   */
  requireNotRemoved(meta: ContextMeta): void {
    const reg = this.registration(meta.id, meta.groupId);
    const account = this.d.identity.accountId;
    const from = reg && removedFrom(reg.ns, reg.group, account);
    if (from) {
      throw forbidden(`this node's account ${account} was removed from group '${from.id}', which owns context '${meta.id}': the context is read-only here (no member node would take its writes)`);
    }
  }

  async requireMeta(contextId: string): Promise<ContextMeta> {
    const meta = await this.d.store.getMeta(contextId);
    if (!meta) throw notFound('Context not found');
    return meta;
  }

  async get(contextId: string): Promise<ContextView> {
    return this.view(await this.requireMeta(contextId), false);
  }

  async list(): Promise<ContextView[]> {
    return Promise.all((await this.d.store.listMeta()).map((m) => this.view(m, true)));
  }

  async forApplication(applicationId: string): Promise<ContextView[]> {
    const metas = (await this.d.store.listMeta()).filter((m) => m.applicationId === applicationId);
    return Promise.all(metas.map((m) => this.view(m, true)));
  }

  /** admin-wire-a §4.2: flat, with the snake_case `application_id` the reference sends. */
  async withExecutors(applicationId: string) {
    const metas = (await this.d.store.listMeta()).filter((m) => m.applicationId === applicationId);
    return Promise.all(
      metas.map(async (m) => ({
        id: m.id,
        application_id: m.applicationId,
        contextStateHash: m.rootHash,
        executors: (await this.d.store.listMembers(m.id)).filter((x) => x.owned).map((x) => x.publicKey),
      })),
    );
  }

  async groupOf(contextId: string): Promise<string | null> {
    const meta = await this.d.store.getMeta(contextId);
    return this.registration(contextId, meta?.groupId)?.group.id ?? null;
  }

  /** No existence check, as the reference: an unknown context holds 0 bytes. */
  storageSize(contextId: string): Promise<bigint> {
    return this.d.store.stateSize(contextId);
  }

  /** What a context takes on this node, by kind (the usage route; estimates); undefined when not held here. */
  async usage(contextId: string): Promise<{ state: bigint; privateState: bigint; delta: bigint } | undefined> {
    const s = this.d.store;
    if (!(await s.meta.get(contextId))) return undefined;
    const [state, privateState, delta] = await Promise.all([s.stateSize(contextId), s.stateSize(contextId, 'private'), s.deltaSize(contextId)]);
    return { state, privateState, delta };
  }

  async identities(contextId: string, ownedOnly: boolean): Promise<string[]> {
    await this.requireMeta(contextId);
    const members = await this.d.store.listMembers(contextId);
    return members.filter((m) => !ownedOnly || m.owned).map((m) => m.publicKey);
  }

  /** The member key this node executes with: its own signing key when a member, else the first owned one. */
  async executorKey(contextId: string): Promise<string | undefined> {
    return this.executorOf(await this.d.store.listMembers(contextId));
  }

  /** `executorKey` without waiting when the context's members are kept in memory; null when they must be read. */
  executorKeyNow(contextId: string): string | undefined | null {
    const members = this.d.store.membersNow(contextId);
    return members === undefined ? null : this.executorOf(members);
  }

  private executorOf(members: readonly ContextMember[]): string | undefined {
    let first: string | undefined;
    for (const m of members) {
      if (!m.owned) continue;
      if (m.publicKey === this.d.identity.publicKey) return m.publicKey;
      first ??= m.publicKey;
    }
    return first;
  }

  /** This node's identity in a context and the context's application (presence, `set_ephemeral`); null when it has none. */
  async ownIdentity(contextId: string): Promise<{ author: string; applicationId: string } | null> {
    const meta = await this.d.store.getMeta(contextId);
    const author = meta ? await this.executorKey(contextId) : undefined;
    return meta && author ? { author, applicationId: meta.applicationId } : null;
  }

  private async view(meta: ContextMeta, withGroup: boolean): Promise<ContextView> {
    const release = await releaseOf(this.d.applications, meta);
    const reg = this.registration(meta.id, meta.groupId);
    const entry = reg?.group.contexts[meta.id];
    const name = entry?.metadata?.name ?? entry?.name;
    return {
      id: meta.id,
      applicationId: meta.applicationId,
      ...(meta.serviceName ? { serviceName: meta.serviceName } : {}),
      contextStateHash: meta.rootHash,
      ...(meta.dagHeads.length > 0 ? { dagHeads: meta.dagHeads.map(toBytes) } : {}),
      ...(release ? { applicationVersion: release.version } : {}),
      ...(name ? { name } : {}),
      ...(withGroup && reg ? { groupId: reg.group.id } : {}),
    };
  }

  // ---- sync status (hearth-only routes: the spec-shaped Context carries none of it) ----------

  /** The sync status of a context this node holds; 404 unknown, 503 on a node without a network. */
  async syncStatus(contextId: string): Promise<ContextSyncView> {
    const syncer = this.requireSyncer();
    await this.requireMeta(contextId);
    return this.withApplication(contextId, await syncer.view(contextId));
  }

  /** The sync status of every context this node holds, in the order of `list()`. */
  async syncStatuses(): Promise<ContextSyncView[]> {
    const syncer = this.requireSyncer();
    const metas = await this.d.store.listMeta();
    return Promise.all(metas.map(async (m) => this.withApplication(m.id, await syncer.view(m.id))));
  }

  /** A context whose application is missing here is not caught up, and its reasons say why (app-fetch.ts). */
  private withApplication(contextId: string, view: SyncStatusFields<BehindReason>): ContextSyncView {
    const p = this.appFetch?.problem(contextId);
    if (!p) return { contextId, ...view };
    return { contextId, ...view, caughtUp: false, reasons: [{ reason: p.reason, detail: p.detail, at: new Date(p.since).toISOString() }, ...view.reasons] };
  }

  private requireSyncer(): SyncPort {
    if (!this.syncer) throw unavailable('this node runs without a network: its contexts have no peers to sync with');
    return this.syncer;
  }

  // ---- creating and deleting -----------------------------------------------------------------

  async create(input: CreateContextInput): Promise<{ contextId: string; memberPublicKey: string; groupId: string; groupCreated: false }> {
    const { governance, identity, applications, executor, store } = this.d;
    if (input.initializationParams.length > MAX_INIT_PARAMS_BYTES) {
      throw badRequest(`initializationParams exceeds ${MAX_INIT_PARAMS_BYTES} bytes`);
    }
    const { ns, group } = governance.requireGroup(input.groupId);
    const account = input.delegated?.author ?? identity.accountId;
    requireMayCreateContext(ns, group, account);
    // The group's target application wins over the request's (admin-wire-a §4.3).
    const applicationId = group.targetApplicationId && !/^0+$/.test(group.targetApplicationId) ? group.targetApplicationId : input.applicationId;
    if (!applicationId) throw badRequest('applicationId is required: the group names no target application');
    const app = await applications.get(applicationId);
    const release = app ? await releaseForGroup(applications, group, applicationId) : null;
    if (!app || !release) throw notFound(`application '${applicationId}' is not installed on this node`);
    if (input.serviceName !== undefined && !app.services.includes(input.serviceName)) {
      throw badRequest(`serviceName '${input.serviceName}' is not a service of application '${applicationId}' (services: ${app.services.join(', ') || 'none'})`);
    }

    const contextKey = input.contextSeed ? keyFromSeed(parseSeed(input.contextSeed, 'contextSeed')) : randomKey();
    const contextId = contextKey.publicKey;
    const member = input.identitySecret ? keyFromSeed(parseSeed(input.identitySecret, 'identitySecret')) : undefined;
    const memberPublicKey = member?.publicKey ?? identity.publicKey;

    return executor.locks.run(contextId, true, async () => {
      if ((await store.getMeta(contextId)) || this.registration(contextId)) {
        throw conflict(`context '${contextId}' already exists (choose another contextSeed)`);
      }
      const now = this.d.clock.now();
      const meta: ContextMeta = {
        id: contextId,
        applicationId,
        groupId: group.id,
        ...(input.serviceName !== undefined ? { serviceName: input.serviceName } : {}),
        bundleBlobId: release.bundleBlobId,
        rootHash: UNINITIALIZED_HASH,
        dagHeads: [],
        createdAt: now,
      };
      // init runs as the creating account (the member's, when created under a warrant) with the new
      // member key, always in write mode (runtime.md §3).
      const result = await executor.run(meta, {
        method: 'init',
        input: input.initializationParams,
        executorId: account,
        deviceId: memberPublicKey,
        readOnly: false,
      });
      if (!result.ok) throw badRequest(`application initialization failed: ${result.message}`);
      if (result.output !== null) throw badRequest('application initialization failed: init must not return a value');
      if (!result.commit) throw badRequest('application initialization failed: init committed no state');

      await governance.submit(ns.id, group.id, input.delegated?.kind ?? CONTEXT_OPS.registered, {
        contextId,
        applicationId,
        ...(input.name !== undefined ? { name: input.name } : {}),
        // joiners lacking the application fetch this bundle from members (app-fetch.ts)
        bundleBlobId: release.bundleBlobId,
        ...input.delegated?.body,
      });
      const extra: BatchOp[] = [store.memberOp(contextId, { publicKey: memberPublicKey, owned: true, addedAt: now })];
      if (member) extra.push(store.keys.putOp(member.publicKey, { privateKey: member.privateKey, createdAt: now }));
      await executor.commit(meta, result, memberPublicKey, extra);
      return { contextId, memberPublicKey, groupId: group.id, groupCreated: false as const };
    });
  }

  /**
   * Deletes the context: takes it out of its group (admins only) and forgets its local state, in
   * that order, under the context's write lock. An unknown context answers false (as the reference).
   */
  async delete(contextId: string): Promise<boolean> {
    return this.d.executor.locks.run(contextId, true, async () => {
      const meta = await this.d.store.getMeta(contextId);
      const reg = this.registration(contextId, meta?.groupId);
      if (!meta && !reg) return false;
      if (reg) await this.d.governance.submit(reg.ns.id, reg.group.id, CONTEXT_OPS.deregistered, { contextId });
      if (meta) await this.d.store.store.batch(await this.d.store.dropOps(contextId));
      this.syncer?.forget(contextId);
      return true;
    });
  }

  // ---- membership on this node ---------------------------------------------------------------

  /**
   * Joins a context registered in a group this node's account belongs to. A context not held yet
   * is recorded uninitialized (the all-ones hash) until a sync pulls its state (spec rule 5).
   * Joining again is a success (admin-wire-a §0.2 item 9).
   */
  async join(contextId: string): Promise<{ contextId: string; memberPublicKey: string }> {
    return (await this.joinLocked(contextId, false))!;
  }

  /**
   * Auto-follow's join (auto-follow.ts): the same path as `join`, for a context this node holds
   * nothing of yet — decided under the context's write lock, so a context being created here, one
   * already joined, or one this node left (its record stays) is never touched and answers
   * undefined. `extra` is written in the join's own batch (auto-follow's record of the join).
   */
  follow(contextId: string, extra: BatchOp[] = []): Promise<{ contextId: string; memberPublicKey: string } | undefined> {
    return this.joinLocked(contextId, true, extra);
  }

  private async joinLocked(contextId: string, onlyNew: boolean, extra: BatchOp[] = []): Promise<{ contextId: string; memberPublicKey: string } | undefined> {
    const { store, identity } = this.d;
    return this.d.executor.locks.run(contextId, true, async () => {
      const meta = await store.getMeta(contextId);
      if (meta && onlyNew) return undefined;
      const reg = this.registration(contextId, meta?.groupId);
      if (!meta && !reg) throw notFound('Context not found');
      if (reg && !isMember(reg.ns, reg.group, identity.accountId)) {
        throw forbidden(`node is not a member of group '${reg.group.id}'`);
      }
      const memberPublicKey = (meta && (await this.executorKey(contextId))) ?? identity.publicKey;
      const ops: BatchOp[] = [store.memberOp(contextId, { publicKey: memberPublicKey, owned: true, addedAt: this.d.clock.now() })];
      if (!meta && reg) {
        const release = await releaseForGroup(this.d.applications, reg.group, reg.group.targetApplicationId);
        // not installed here: the version governance names, which app-fetch.ts takes from members
        const bundleBlobId = release?.bundleBlobId ?? namedBundle(reg, contextId);
        ops.push(
          store.meta.putOp(contextId, {
            id: contextId,
            applicationId: reg.group.targetApplicationId,
            groupId: reg.group.id,
            ...(bundleBlobId ? { bundleBlobId } : {}),
            rootHash: UNINITIALIZED_HASH,
            dagHeads: [],
            createdAt: this.d.clock.now(),
          }),
        );
      }
      await store.store.batch([...ops, ...extra]);
      this.syncer?.syncNow(contextId);
      this.appFetch?.ensure(contextId);
      return { contextId, memberPublicKey };
    });
  }

  /** A local opt-out (admin-wire-a §4.4): this node stops speaking in the context; no governance op. */
  async leave(contextId: string): Promise<void> {
    const { store } = this.d;
    await this.d.executor.locks.run(contextId, true, async () => {
      await this.requireMeta(contextId);
      const owned = (await store.listMembers(contextId)).filter((m) => m.owned);
      await store.store.batch(owned.map((m) => store.members.delOp(`${contextId}/${m.publicKey}`)));
    });
  }

  /** Switches the context to another installed application (admin or MANAGE_APPLICATION in its group). */
  async updateApplication(contextId: string, applicationId: string): Promise<void> {
    const { store, identity } = this.d;
    await this.d.executor.locks.run(contextId, true, async () => {
      const meta = await this.requireMeta(contextId);
      const app = await this.d.applications.get(applicationId);
      if (!app) throw badRequest(`application '${applicationId}' is not installed on this node`);
      const reg = this.registration(contextId, meta.groupId);
      if (reg) requireCapability(reg.ns, reg.group, identity.accountId, 'MANAGE_APPLICATION');
      // the context now runs that application's current version
      await store.meta.put(contextId, { ...meta, applicationId, bundleBlobId: app.bundleBlobId });
    });
  }

  /** A fresh identity this node holds the key of (`POST /identity/context`). */
  async newIdentity(): Promise<{ publicKey: string }> {
    const key = randomKey();
    await this.d.store.keys.put(key.publicKey, { privateKey: key.privateKey, createdAt: this.d.clock.now() });
    return { publicKey: key.publicKey };
  }

  // ---- sync on a node without peers ----------------------------------------------------------

  /**
   * Accepts a sync of one context (or all): this node has no peers to pull from, so it reports the
   * outcome at once on the event stream (`SyncStatus`): `idle` for a context with state,
   * `waitingForPeers` for one that was joined but never pulled.
   */
  async sync(contextId?: string): Promise<void> {
    const metas = contextId ? [await this.requireMeta(contextId)] : await this.d.store.listMeta();
    if (this.syncer) return this.syncer.syncNow(contextId);
    for (const m of metas) this.publishSyncStatus(m);
  }

  /**
   * A resync re-pulls from peers. Without peers nothing can be pulled back, so local state and DAG
   * heads are kept even with `force` (discarding them would lose the only copy).
   */
  async resync(contextId: string): Promise<{ contextId: string; resyncStarted: boolean }> {
    const meta = await this.requireMeta(contextId);
    if (this.syncer) this.syncer.syncNow(contextId);
    else this.publishSyncStatus(meta);
    return { contextId, resyncStarted: true };
  }

  private publishSyncStatus(meta: ContextMeta): void {
    const state = meta.rootHash === UNINITIALIZED_HASH ? 'waitingForPeers' : 'idle';
    this.d.bus.publish({ type: 'context', contextId: meta.id, kind: 'SyncStatus', data: { syncState: { state }, failureCount: 0 } });
  }

  // ---- delegated execution -------------------------------------------------------------------

  /**
   * `GET /contexts/{id}/intents` (admin spec "Delegated execution"): what a warrant for this node
   * must name — its account and executor key, and the release the context runs — with
   * `canAuthorOnBehalf`: whether this node's account is a `RelayTee` or holds CAN_AUTHOR_ON_BEHALF on
   * the owning group or an ancestor (`grantedOnGroupId` names where); false is an answer, not an error.
   */
  async intents(contextId: string) {
    const { identity } = this.d;
    const meta = await this.requireMeta(contextId);
    const release = await releaseOf(this.d.applications, meta);
    const reg = this.registration(contextId, meta.groupId);
    const grant = reg ? authorshipGrant(reg.ns, reg.group, identity.accountId) : undefined;
    return {
      executorAccount: identity.accountId,
      executorKey: (await this.executorKey(contextId)) ?? identity.publicKey,
      ...(release ? { releaseBytecodeId: release.bundleBlobId, releaseVersion: release.version } : {}),
      canAuthorOnBehalf: grant !== undefined,
      groupId: reg?.group.id ?? meta.groupId,
      ...(grant ? { grantedOnGroupId: grant.id } : {}),
    };
  }
}
