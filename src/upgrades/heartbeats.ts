/**
 * Migration heartbeats (domain.md §1.4: `MigrationHeartbeat`, one of the messages of a namespace's
 * topic `ns/<hex>`; admin-wire-b §7.5 `report`): how a node learns where the other members of a
 * namespace stand in its migration, so `migration-status` can roll the fleet up.
 *
 * As the reference's: telemetry, never governance state and never a gate. Each node publishes its
 * own facts for every namespace it holds that has an upgrade — the upgrade, its target state
 * version, how many of its contexts still wait to migrate and why one failed — when they change
 * (a migration job ended, an upgrade applied or was aborted) and every 15 s; the others keep the
 * newest beat of each device for 60 s, and a device without a fresh beat is `unknown`. A beat is
 * taken only from a key that speaks for a member account of the namespace; its author is the
 * gossip message's signed origin (the network contract checks the signature), so the beat carries
 * no signature of its own. One stamped more than 60 s ahead of this node's clock, or older than the
 * device's last, is dropped (a skewed clock must not pin a stale report).
 */
import type { NodeIdentity } from '../identity/identity.ts';
import type { EventBus, NodeEvent } from '../bus.ts';
import type { Clock } from '../clock.ts';
import { unixSecs } from '../clock.ts';
import { accountOfKey, type Governance, isMember } from '../governance/index.ts';
import { encodeJson, type JsonObject, namespaceTopic, type Network, type PeerKey } from '../network/index.ts';
import type { MigrationFailureReason } from '../wire/upgrades.ts';
import type { UpgradeProgress } from './progress.ts';
import { localMigration, type PeerReport } from './rollup.ts';
import { UPGRADE_ABORTED, UPGRADE_APPLIED } from './types.ts';

/** The `type` of a heartbeat on a namespace topic. */
export const HEARTBEAT_TYPE = 'migration';
/** How long a beat counts (the reference's `DEFAULT_HEARTBEAT_TTL`). */
export const HEARTBEAT_TTL_MS = 60_000;
/** How far ahead of this node's clock a beat may be stamped (the reference's `MAX_HEARTBEAT_CLOCK_DRIFT_MS`). */
export const MAX_DRIFT_MS = 60_000;
/** The periodic beat, well inside the TTL. */
export const HEARTBEAT_EVERY_MS = 15_000;

const HEX64 = /^[0-9a-f]{64}$/;
const REASONS: readonly MigrationFailureReason[] = ['check_aborted', 'apply_failed', 'no_migration_path'];
const count = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
/** What a migration job ending or an upgrade op changes: the bus kinds that trigger a beat at once. */
const CHANGES = new Set(['MigrationProgress', UPGRADE_APPLIED, UPGRADE_ABORTED]);

export interface MigrationBeat extends PeerReport {
  namespaceId: string;
}

/** A heartbeat from a peer, field by field, or why not. */
export function parseBeat(raw: Record<string, unknown>): MigrationBeat | string {
  if (!HEX64.test(String(raw.namespaceId)) || !HEX64.test(String(raw.upgradeId))) return 'heartbeat must name a namespace and an upgrade (64 hex each)';
  if (!count(raw.schemaVersion) || (raw.schemaVersion as number) > 0xffffffff) return 'heartbeat schemaVersion must be a u32';
  if (!count(raw.residueAuto) || !count(raw.syncedUpToHlc) || !count(raw.tsMs)) return 'heartbeat residueAuto, syncedUpToHlc and tsMs must be non-negative integers';
  if (raw.migrationFailed !== undefined && !REASONS.includes(raw.migrationFailed as MigrationFailureReason)) return `heartbeat migrationFailed must be one of ${REASONS.join(', ')}`;
  return {
    namespaceId: raw.namespaceId as string,
    upgradeId: raw.upgradeId as string,
    schemaVersion: raw.schemaVersion as number,
    residueAuto: raw.residueAuto as number,
    syncedUpToHlc: raw.syncedUpToHlc as number,
    tsMs: raw.tsMs as number,
    ...(raw.migrationFailed !== undefined ? { migrationFailed: raw.migrationFailed as MigrationFailureReason } : {}),
  };
}

/** The newest beat of each (namespace, device), kept `HEARTBEAT_TTL_MS` from its arrival. Never persisted. */
export class HeartbeatCache {
  private readonly entries = new Map<string, { beat: MigrationBeat; receivedAt: number }>();

  constructor(private readonly clock: Clock) {}

  /** Keeps the beat unless it is stamped too far ahead or is not newer than the device's last. */
  insert(peer: string, beat: MigrationBeat): boolean {
    const now = this.clock.now();
    if (beat.tsMs > now + MAX_DRIFT_MS) return false;
    const key = `${beat.namespaceId}/${peer}`;
    const last = this.entries.get(key);
    if (last && beat.tsMs <= last.beat.tsMs) return false;
    // devices that left stop beating: forget what has been stale for two windows
    for (const [k, e] of this.entries) if (now - e.receivedAt > 2 * HEARTBEAT_TTL_MS) this.entries.delete(k);
    this.entries.set(key, { beat, receivedAt: now });
    return true;
  }

  /** The device's beat if one arrived within the TTL. */
  fresh(namespaceId: string, peer: string): MigrationBeat | undefined {
    const e = this.entries.get(`${namespaceId}/${peer}`);
    return e && this.clock.now() - e.receivedAt <= HEARTBEAT_TTL_MS ? e.beat : undefined;
  }
}

/** The namespace-topic messages of other domains, as the governance replicator routes them. */
export interface TopicMessages {
  onTopicMessage(type: string, handler: (namespaceId: string, message: JsonObject, from: PeerKey) => void | Promise<void>): () => void;
}

export interface HeartbeatDeps {
  network: Network;
  topics: TopicMessages;
  governance: Governance;
  identity: NodeIdentity;
  bus: EventBus;
  clock: Clock;
  progress: UpgradeProgress;
  onError: (err: unknown) => void;
  everyMs?: number;
}

export class MigrationHeartbeats {
  readonly cache: HeartbeatCache;
  /** the facts last published per namespace (the edge trigger compares against them) */
  private readonly lastSent = new Map<string, string>();
  private readonly stops: Array<() => void> = [];

  constructor(private readonly d: HeartbeatDeps) {
    this.cache = new HeartbeatCache(d.clock);
  }

  start(): void {
    this.stops.push(this.d.topics.onTopicMessage(HEARTBEAT_TYPE, (nsId, message, from) => this.receive(nsId, message, from)));
    this.stops.push(
      this.d.bus.subscribe((e: NodeEvent) => {
        if (e.type === 'group' && CHANGES.has(e.kind)) void this.beat(e.namespaceId, false).catch(this.d.onError);
      }),
    );
    const timer = setInterval(() => void this.tick().catch(this.d.onError), this.d.everyMs ?? HEARTBEAT_EVERY_MS);
    timer.unref();
    this.stops.push(() => clearInterval(timer));
  }

  stop(): void {
    for (const stop of this.stops.splice(0)) stop();
  }

  /** Publishes this node's facts for every namespace it holds that has an upgrade. */
  async tick(): Promise<void> {
    for (const ns of this.d.governance.namespaces()) await this.beat(ns.id, true);
  }

  /** Publishes this node's facts for one namespace: always (`periodic`), or when they changed. */
  async beat(namespaceId: string, periodic: boolean): Promise<void> {
    const ns = this.d.governance.namespace(namespaceId);
    const local = ns ? await localMigration(this.d.progress, ns) : undefined;
    if (!local) return;
    const facts = {
      upgradeId: local.record.id,
      schemaVersion: local.record.toStateVersion,
      residueAuto: local.total - local.swapped,
      ...(local.reason ? { migrationFailed: local.reason } : {}),
    };
    const key = JSON.stringify(facts);
    if (!periodic && this.lastSent.get(namespaceId) === key) return;
    const topic = namespaceTopic(namespaceId);
    if (this.d.network.topicPeers(topic).length === 0) return;
    const beat = { type: HEARTBEAT_TYPE, namespaceId, ...facts, syncedUpToHlc: unixSecs(this.d.clock), tsMs: this.d.clock.now() };
    // a lost beat is repaired by the next one: nothing to report
    const sent = await this.d.network.publish(topic, encodeJson(beat)).catch(() => 0);
    if (sent > 0) this.lastSent.set(namespaceId, key);
  }

  private receive(namespaceId: string, message: JsonObject, from: PeerKey): void {
    const beat = parseBeat(message);
    if (typeof beat === 'string' || beat.namespaceId !== namespaceId) {
      this.d.network.penalize(from, 'invalid_message', typeof beat === 'string' ? beat : 'a heartbeat for another namespace');
      return;
    }
    const ns = this.d.governance.namespace(namespaceId);
    const account = ns ? accountOfKey(ns, from) : undefined;
    // a key that once spoke for a member (a revoked device, a removed member) gets past the topic's admission; its beat does not count
    if (!ns || account === undefined || !Object.values(ns.groups).some((g) => isMember(ns, g, account))) return;
    this.cache.insert(from, beat);
  }
}
