/**
 * Group upgrades and migration without HTTP (admin spec "Sync, upgrades and migration";
 * admin-wire-b §7; domain.md §4.6; states and transitions in docs/governance.md "Upgrades and
 * migrations").
 *
 * An upgrade moves a group — and with `cascade` every descendant running the same application — to
 * a newer installed version of the same application (same application id, so the same package and
 * signing key). This node checks the request, resolves versions and bundles, and publishes one
 * governance op (ops.ts); every node that applies it migrates its own contexts (migrator.ts).
 * Refusals: another application, a downgrade or the same version (409), a version not installed
 * (404), a group without contexts or with an upgrade still migrating (409), a target without an
 * embedded ABI unless `forceCodeOnly` (409), no `MANAGE_APPLICATION` (403).
 */
import type { NodeIdentity } from '../identity/identity.ts';
import { type ApplicationCatalog, compareVersions, type InstalledRelease } from '../applications/index.ts';
import type { Clock } from '../clock.ts';
import { type Contexts, type Release, releaseOf } from '../contexts/index.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import type { EventBus, NodeEvent } from '../bus.ts';
import { type Governance, type GroupState, type NamespaceState, requireCapability, requireMember, subtree } from '../governance/index.ts';
import type { Network } from '../network/index.ts';
import type { Store } from '../store/store.ts';
import { MigrationHeartbeats, type TopicMessages } from './heartbeats.ts';
import { Migrator } from './migrator.ts';
import type { UpgradeOpBody } from './ops.ts';
import { UpgradeProgress } from './progress.ts';
import { fleetRollup, type PeerReports } from './rollup.ts';
import { UNRESOLVED_APP_KEY, UPGRADE_APPLIED, UPGRADE_OPS } from './types.ts';
import type { GroupUpgradeStatus } from '../wire/upgrades.ts';

export interface UpgradeServiceDeps {
  store: Store;
  governance: Governance;
  contexts: Contexts;
  applications: ApplicationCatalog;
  identity: NodeIdentity;
  bus: EventBus;
  clock: Clock;
  onError: (err: unknown) => void;
  /** with both, members exchange migration heartbeats (heartbeats.ts); without, the others stay `unknown` */
  network?: Network;
  topics?: TopicMessages;
}

export interface UpgradeRequest {
  targetApplicationId: string;
  cascade?: boolean;
  forceCodeOnly?: boolean;
  /** hearth: the installed version to move to (default: the newest installed) */
  version?: string;
}

/** UpgradeGroupResponseData (admin-wire-b §7.2): counters are null once completed. */
export interface UpgradeAnswer {
  groupId: string;
  status: GroupUpgradeStatus['status'];
  localContextsTotal: number | null;
  localContextsSwapped: number | null;
  localContextsFailed: number | null;
}

export class UpgradeService {
  readonly progress: UpgradeProgress;
  readonly migrator: Migrator;
  readonly heartbeats?: MigrationHeartbeats;
  /** the other members' fresh migration reports */
  private readonly reports: PeerReports;
  private unsubscribe?: () => void;

  constructor(private readonly d: UpgradeServiceDeps) {
    this.progress = new UpgradeProgress(d.store, d.contexts.records);
    if (d.network && d.topics) this.heartbeats = new MigrationHeartbeats({ ...d, network: d.network, topics: d.topics, progress: this.progress });
    this.reports = (namespaceId, peer) => this.heartbeats?.cache.fresh(namespaceId, peer);
    this.migrator = new Migrator({ ...d, progress: this.progress, reports: this.reports });
  }

  /** Migrates after every applied upgrade op, and resumes what a stop interrupted. */
  async start(): Promise<void> {
    this.unsubscribe = this.d.bus.subscribe((e: NodeEvent) => {
      if (e.type !== 'group' || e.kind !== UPGRADE_APPLIED) return;
      const { upgradeId, groupIds } = e.data as { upgradeId: string; groupIds: string[] };
      this.migrator.enqueue({ namespaceId: e.namespaceId, upgradeId, groupIds, announce: true });
    });
    for (const ns of this.d.governance.namespaces()) {
      for (const g of Object.values(ns.groups)) {
        const u = g.upgrade;
        if (!u || u.aborted) continue;
        const c = await this.progress.counts(g, u);
        // also a group whose last swap landed but whose completion a stop kept from being recorded
        const unrecorded = c.swapped.length === c.contexts.length && (await this.progress.completedAt(u.id, g.id)) === null;
        if (unrecorded || c.swapped.length + c.failed.size < c.contexts.length) this.migrator.enqueue({ namespaceId: ns.id, upgradeId: u.id, groupIds: [g.id], announce: false });
      }
    }
    this.migrator.start();
    this.heartbeats?.start();
  }

  async stop(): Promise<void> {
    this.heartbeats?.stop();
    this.unsubscribe?.();
    await this.migrator.stop();
  }

  /**
   * A version was installed on this node: every upgrade targeting it whose contexts here wait for it
   * — failed for lack of the bundle, or joined after the op on the previous version — migrates now.
   * (A node that lacks the target cannot migrate and, being a plain member, often may not retry.)
   */
  async bundleInstalled(bundleBlobId: string): Promise<void> {
    for (const ns of this.d.governance.namespaces()) {
      for (const g of Object.values(ns.groups)) {
        const u = g.upgrade;
        if (!u || u.aborted || u.toAppKey !== bundleBlobId) continue;
        const c = await this.progress.counts(g, u);
        const waiting = [...c.failed].filter(([, f]) => f.awaitsBundle === bundleBlobId).map(([contextId]) => contextId);
        if (c.swapped.length + c.failed.size - waiting.length >= c.contexts.length) continue;
        await this.d.store.batch(waiting.map((contextId) => this.progress.clearFailureOp(u.id, contextId)));
        this.migrator.enqueue({ namespaceId: ns.id, upgradeId: u.id, groupIds: [g.id], announce: false });
      }
    }
  }

  async upgrade(groupId: string, req: UpgradeRequest): Promise<UpgradeAnswer> {
    const { governance, applications, identity } = this.d;
    const { ns, group } = governance.requireGroup(groupId);
    requireCapability(ns, group, identity.accountId, 'MANAGE_APPLICATION');
    if (req.targetApplicationId !== group.targetApplicationId) {
      throw conflict(`upgrade refused: group '${group.id}' runs application ${group.targetApplicationId}; an upgrade moves it to a newer version of the same application, not to ${req.targetApplicationId}`);
    }
    const target = await this.targetRelease(req.targetApplicationId, req.version);
    const groups = req.cascade ? subtree(ns, group.id).filter((g) => g.targetApplicationId === group.targetApplicationId && (g === group || g.appKey !== target.bundleBlobId)) : [group];
    if (group.appKey === target.bundleBlobId) throw conflict(`upgrade refused: group '${group.id}' already targets version ${target.version}`);
    for (const g of groups) {
      if (this.migrator.busy(g.id) || (g.upgrade && !g.upgrade.aborted && (await this.progress.status(g, g.upgrade)).status === 'in_progress')) {
        throw conflict(`an upgrade of group '${g.id}' is still in progress (retry its failed contexts, or abort it, first)`);
      }
    }
    if (groups.every((g) => Object.keys(g.contexts).length === 0)) throw conflict(`upgrade refused: group '${group.id}' has no contexts to upgrade`);
    const from = await this.currentRelease(group, groups);
    const order = compareVersions(target.version, from.version);
    if (order === 0) throw conflict(`upgrade refused: group '${group.id}' already runs version ${from.version}`);
    if (order < 0) throw conflict(`upgrade refused: ${from.version} → ${target.version} is a downgrade`);
    const abi = applications.abiOfVersion ? ((await applications.abiOfVersion(target.bundleBlobId)) as { state_version?: unknown } | null) : null;
    if (!abi && !req.forceCodeOnly) {
      throw conflict(`upgrade refused: version ${target.version} embeds no ABI, so its state layout cannot be checked; pass forceCodeOnly to upgrade anyway`);
    }
    const stateVersion = abi?.state_version;
    const body: UpgradeOpBody = {
      groupIds: groups.map((g) => g.id),
      targetApplicationId: req.targetApplicationId,
      fromVersion: from.version,
      toVersion: target.version,
      fromAppKey: from.bundleBlobId,
      toAppKey: target.bundleBlobId,
      toStateVersion: typeof stateVersion === 'number' && Number.isInteger(stateVersion) && stateVersion >= 0 && stateVersion <= 0xffffffff ? stateVersion : 0,
      cascade: req.cascade ?? false,
    };
    await governance.submit(ns.id, group.id, UPGRADE_OPS.set, { ...body });
    return this.answer(group.id);
  }

  /** `GET /groups/{g}/upgrade/status`: the group's latest upgrade as this node sees it, or null. */
  async status(groupId: string): Promise<GroupUpgradeStatus | null> {
    const { ns, group } = this.d.governance.requireGroup(groupId);
    requireMember(ns, group, this.d.identity.accountId);
    return group.upgrade ? this.progress.status(group, group.upgrade) : null;
  }

  /** GroupInfo `activeUpgrade`: the upgrade while it is in progress here, else undefined. */
  async activeUpgrade(groupId: string): Promise<GroupUpgradeStatus | undefined> {
    const group = this.d.governance.locate(groupId)?.group;
    if (!group?.upgrade) return undefined;
    const s = await this.progress.status(group, group.upgrade);
    return s.status === 'in_progress' ? s : undefined;
  }

  /** `POST /groups/{g}/upgrade/retry`: migrates this node's failed contexts of the group again. */
  async retry(groupId: string): Promise<UpgradeAnswer> {
    const { ns, group } = this.d.governance.requireGroup(groupId);
    requireCapability(ns, group, this.d.identity.accountId, 'MANAGE_APPLICATION');
    const u = group.upgrade;
    if (!u) throw notFound(`group '${group.id}' has no upgrade to retry`);
    if (u.aborted) throw conflict(`the upgrade of group '${group.id}' was aborted; start a new one instead`);
    if (this.migrator.busy(group.id)) throw conflict(`group '${group.id}' is still migrating; retry once it stops`);
    const c = await this.progress.counts(group, u);
    if (c.failed.size === 0) throw conflict(`nothing to retry: no context of group '${group.id}' failed to migrate`);
    await this.d.store.batch([...c.failed.keys()].map((contextId) => this.progress.clearFailureOp(u.id, contextId)));
    this.migrator.enqueue({ namespaceId: ns.id, upgradeId: u.id, groupIds: [group.id], announce: false });
    return this.answer(group.id);
  }

  /** `GET /groups/{ns}/migration-status` (flat MigrationStatus, admin-wire-b §7.5). */
  async migrationStatus(namespaceId: string) {
    const ns = this.namespace(namespaceId);
    const r = await fleetRollup({ ...this.d, progress: this.progress, reports: this.reports }, ns);
    let fleetCompletedAt: number | undefined;
    if (r.allMigrated && r.record) {
      for (const g of Object.values(ns.groups)) {
        if (g.upgrade?.id !== r.record.id) continue;
        const at = await this.progress.completedAt(r.record.id, g.id);
        if (at !== null) fleetCompletedAt = Math.max(fleetCompletedAt ?? 0, at);
      }
    }
    return {
      targetVersion: r.record?.toStateVersion ?? 0,
      expectedMembers: r.total,
      ...(r.record ? { cohortPinnedAtHlc: r.record.fence } : {}),
      ...(fleetCompletedAt !== undefined ? { fleetCompletedAt } : {}),
      rollup: { migrated: r.migrated, inProgress: r.inProgress, unknown: r.unknown, failed: r.failed, total: r.total, allMigrated: r.allMigrated, membersPendingSignature: 0 },
      members: r.members,
    };
  }

  /** `GET /groups/{ns}/cascade-status`: every group of the namespace with an upgrade, parents first. */
  async cascadeStatus(namespaceId: string) {
    const ns = this.namespace(namespaceId);
    const out = [];
    for (const g of subtree(ns, ns.id)) {
      if (!g.upgrade) continue;
      out.push({ groupId: g.id, upgrade: await this.progress.status(g, g.upgrade), ...(g.upgrade.cascade ? { cascadeHlc: g.upgrade.fence } : {}) });
    }
    return out;
  }

  /**
   * `POST /groups/{ns}/migration/abort`: every upgrade of the namespace still migrating here goes
   * back to its previous version for contexts not yet moved. Idempotent: `aborted: false` when
   * nothing is pending.
   */
  async abort(namespaceId: string): Promise<{ namespaceId: string; aborted: boolean }> {
    const ns = this.namespace(namespaceId);
    requireCapability(ns, ns.groups[ns.id], this.d.identity.accountId, 'MANAGE_APPLICATION');
    let pending = false;
    for (const g of Object.values(ns.groups)) {
      if (g.upgrade && !g.upgrade.aborted && (this.migrator.busy(g.id) || (await this.progress.status(g, g.upgrade)).status === 'in_progress')) pending = true;
    }
    if (!pending) return { namespaceId: ns.id, aborted: false };
    await this.d.governance.submit(ns.id, ns.id, UPGRADE_OPS.aborted, {});
    return { namespaceId: ns.id, aborted: true };
  }

  private async answer(groupId: string): Promise<UpgradeAnswer> {
    const group = this.d.governance.requireGroup(groupId).group;
    const s = await this.progress.status(group, group.upgrade!);
    return { groupId, status: s.status, localContextsTotal: s.localContextsTotal, localContextsSwapped: s.localContextsSwapped, localContextsFailed: s.localContextsFailed };
  }

  /** A namespace the node knows and its account belongs to; a subgroup id is a 400. */
  private namespace(namespaceId: string): NamespaceState {
    const found = this.d.governance.requireGroup(namespaceId);
    if (found.ns.id !== found.group.id) throw badRequest(`'${namespaceId}' is a subgroup: migration routes take the namespace id (${found.ns.id})`);
    requireMember(found.ns, found.group, this.d.identity.accountId);
    return found.ns;
  }

  private async targetRelease(applicationId: string, version: string | undefined): Promise<InstalledRelease> {
    const releases = this.d.applications.releases ? await this.d.applications.releases(applicationId) : [];
    if (releases.length === 0) throw notFound(`application '${applicationId}' is not installed on this node`);
    const target = version === undefined ? releases[0] : releases.find((r) => r.version === version);
    if (!target) throw notFound(`version ${version} of application '${applicationId}' is not installed on this node (installed: ${releases.map((r) => r.version).join(', ')})`);
    return target;
  }

  /** The version the group runs: the one it pins, else the oldest its contexts here run. */
  private async currentRelease(group: GroupState, groups: GroupState[]): Promise<Release> {
    const { applications, contexts } = this.d;
    if (group.appKey !== UNRESOLVED_APP_KEY && applications.installedRelease) {
      const pinned = await applications.installedRelease(group.appKey);
      if (pinned) return { bundleBlobId: pinned.bundleBlobId, version: pinned.version };
    }
    let oldest: Release | undefined;
    for (const g of groups) {
      for (const contextId of Object.keys(g.contexts)) {
        const meta = await contexts.records.getMeta(contextId);
        const r = meta ? await releaseOf(applications, meta) : null;
        if (r && (!oldest || compareVersions(r.version, oldest.version) < 0)) oldest = r;
      }
    }
    if (!oldest) throw conflict(`upgrade refused: the version group '${group.id}' runs is not installed on this node, and none of its contexts is held here`);
    return oldest;
  }
}
