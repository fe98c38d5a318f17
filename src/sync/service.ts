/**
 * Context state sync (issue #13; domain.md §2.5–§2.8): the driver that moves deltas between the
 * member nodes of a context over the network interface.
 *
 * - Write path: every delta a local call commits (already durable; the call's answer never waits)
 *   is sealed with its group's key and published on the context's topic (the bare context id). A
 *   delta too large for gossip, or one whose key this node cannot get, is announced by its heads
 *   instead, and peers pull it over the stream.
 * - Receive path: a gossiped delta is checked (origin signature, the origin a writer of the group),
 *   opened with the group key (fetched from the sender when missing), its id re-derived, then applied
 *   in causal order (apply.ts).
 * - Catch-up: on connect, on every heartbeat that advertises heads this node lacks, when the
 *   periodic check (each heartbeat, one member's heads over the stream) finds heads it lacks, on
 *   join and on `POST /contexts/sync`, a node pulls from a member peer: every delta it lacks given its heads
 *   (`ContextBackfillRequest`), or, for a context it has no state of yet, a snapshot
 *   (`ContextSnapshotRequest`: the state rows verbatim, every delta record, heads and root).
 * - Serving (serve.ts): heads, backfill and snapshots to peers that speak for a member of the group.
 *
 * Every wait has a deadline and the service's signal; whatever a peer sends, the worst outcome is a
 * dropped message, a penalty and a reason in the sync status.
 */
import type { Logger } from 'pino';
import type { NodeIdentity } from '../identity/identity.ts';
import type { Clock } from '../clock.ts';
import { type ContextExecutor, type ContextMeta, type ContextStore, type DeltaRecord, UNINITIALIZED_HASH } from '../contexts/index.ts';
import type { EventBus } from '../bus.ts';
import { contextTopic, decodeJson, encodeJson, Follower, type GossipMessage, MAX_FRAME_BYTES, MAX_GOSSIP_BYTES, type Network, type PeerKey, PeerNetworkError, type PenaltyReason, type StreamRouter } from '../network/index.ts';
import { DeltaApplier, type Snapshot } from './apply.ts';
import { MissingChase } from './chase.ts';
import { HybridClock } from './hlc.ts';
import { APPLY_RETRY } from './retries.ts';
import { PENDING_LIMITS } from './pending.ts';
import { BACKFILL_FRONTIER, MAX_BACKFILL_BATCHES, SYNC_DEFAULTS, type SyncOptions } from './options.ts';
import { SyncServer, upgradePending } from './serve.ts';
import { open, seal, type GroupKeys } from './keys.ts';
import { removedFrom } from '../governance/index.ts';
import { SyncStatusBoard, type ContextSyncStatus } from './status.ts';
import { memberAccount, verifyHead, verifyRecord, type Registration } from './verify.ts';
import { deltaDigest, isHex64, KINDS, parseBody, parseHead, parseIds, parseRecord, toRecord, type DeltaBody } from './wire.ts';

export { MAX_BACKFILL_BATCHES, SYNC_DEFAULTS, upgradePending, type SyncOptions };

export interface ContextSyncDeps {
  records: ContextStore;
  executor: ContextExecutor;
  /** the context's group and namespace as governance knows them */
  locate: (contextId: string) => Registration | undefined;
  identity: NodeIdentity;
  network: Network;
  router: StreamRouter;
  keys: GroupKeys;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  options?: Partial<SyncOptions>;
}

/**
 * Periodic heads checks in flight at most: each heartbeat starts one per caught-up context, and a
 * member that does not answer holds each for the request's deadline, so a node with many contexts
 * would otherwise stack one stream per context per heartbeat on a slow peer.
 */
const MAX_CHECKS = 30;
const frameOpts = (timeoutMs: number, signal: AbortSignal) => ({ timeoutMs, maxResponseFrameBytes: MAX_FRAME_BYTES, signal });

export class ContextSync {
  readonly status: SyncStatusBoard;
  readonly applier: DeltaApplier;
  readonly hlc: HybridClock;
  private readonly opts: SyncOptions;
  /** the followed context topics, listeners, heartbeat and pulls in flight: stop() ends them */
  private readonly life = new Follower();
  /** periodic heads checks in flight (bounded by MAX_CHECKS) */
  private checking = 0;
  /** contexts whose missing deltas are being chased across peers (chase.ts) */
  private readonly chase: MissingChase;

  constructor(private readonly d: ContextSyncDeps) {
    this.opts = { ...SYNC_DEFAULTS, ...d.options };
    this.hlc = new HybridClock(() => d.clock.now());
    this.status = new SyncStatusBoard(d.bus, () => d.clock.now());
    this.applier = new DeltaApplier({
      records: d.records,
      executor: d.executor,
      bus: d.bus,
      status: this.status,
      logger: d.logger,
      now: () => d.clock.now(),
      accountOf: (contextId, key) => {
        const reg = d.locate(contextId);
        return reg ? memberAccount(reg, key) : undefined;
      },
      deferral: (meta) => upgradePending(d.locate(meta.id), meta),
      retry: { ...APPLY_RETRY, ...this.opts.applyRetry },
      pending: this.opts.pending,
      penalize: (origin, why) => d.network.penalize(origin, 'invalid_message', why),
    });
    // heads, backfill and snapshots for member peers (serve.ts)
    new SyncServer({ ...d, status: this.status, applier: this.applier });
    this.chase = new MissingChase({
      applier: this.applier,
      holders: (contextId) => this.holders(contextId),
      pull: (contextId, peer) => this.pull(contextId, peer),
      penalize: (peer, why) => d.network.penalize(peer, 'invalid_message', why),
      now: () => d.clock.now(),
      logger: d.logger,
      signal: this.life.signal,
      parentTimeoutMs: this.opts.pending?.parentTimeoutMs ?? PENDING_LIMITS.parentTimeoutMs,
    });
  }

  /** What the executor stamps on each delta made here: its HLC, this node as origin, and the signature. */
  readonly stampDelta = (delta: DeltaRecord): Pick<DeltaRecord, 'hlc' | 'origin' | 'signature'> => {
    const hlc = this.hlc.tick();
    const origin = this.d.identity.publicKey;
    return { hlc, origin, signature: this.d.identity.sign(deltaDigest({ ...delta, hlc, origin })) };
  };

  async start(): Promise<void> {
    for (const meta of await this.d.records.listMeta()) this.follow(meta.id);
    this.life.onStop(
      this.d.executor.onCommit((delta) => {
        void this.applier.noteLocal(delta).catch((e: unknown) => this.d.logger.warn({ err: e }, 'noting a local delta failed'));
        void this.publishLocal(delta);
      }),
    );
    this.life.onStop(this.d.network.onPeer((e) => e.type === 'connected' && void this.onConnected(e.peer)));
    // a context that migrated (src/upgrades/migrator.ts) pulls at once the deltas it deferred meanwhile
    this.life.onStop(this.d.bus.subscribe((e) => e.type === 'context' && e.kind === 'AppVersionChanged' && this.syncNow(e.contextId)));
    this.life.every(this.opts.heartbeatMs, () => this.heartbeat());
  }

  stop(): Promise<void> {
    this.applier.stop();
    return this.life.stop();
  }

  /** The sync status of a context this node holds. */
  async view(contextId: string): Promise<ContextSyncStatus> {
    const meta = await this.d.records.getMeta(contextId);
    const initialized = meta !== undefined && meta.rootHash !== UNINITIALIZED_HASH;
    return this.status.view(contextId, initialized, this.holders(contextId).length > 0, this.removal(contextId));
  }

  /** Why this node no longer takes part in a context: an admin removed its account from the group (issue 23 §3). */
  private removal(contextId: string): string | undefined {
    const reg = this.d.locate(contextId);
    const from = reg && removedFrom(reg.ns, reg.group, this.d.identity.accountId);
    return from ? `an admin removed this node's account from group ${from.id}: its copy is read-only and no longer syncs; an invitation issued after the removal lets it back` : undefined;
  }

  /** Follows a context (its topic) and pulls it from its peers now; answers at once. */
  syncNow(contextId?: string): void {
    void (async () => {
      const ids = contextId ? [contextId] : (await this.d.records.listMeta()).map((m) => m.id);
      for (const id of ids) {
        this.follow(id);
        const peers = this.holders(id);
        if (peers.length === 0) {
          // nothing to pull from: say so at once (idle with state, waiting for peers without)
          const meta = await this.d.records.getMeta(id);
          this.status.set(id, meta && meta.rootHash !== UNINITIALIZED_HASH ? 'idle' : 'waitingForPeers', true);
        }
        for (const p of peers) void this.pull(id, p);
      }
    })().catch((e: unknown) => this.d.logger.debug({ err: (e as Error).message }, 'sync trigger failed'));
  }

  /** Stops following a context this node no longer holds. */
  forget(contextId: string): void {
    this.life.unfollow(contextId);
    this.applier.forget(contextId);
    this.status.forget(contextId);
  }

  // ——— write path ———

  private async publishLocal(delta: DeltaRecord): Promise<void> {
    const topic = contextTopic(delta.contextId);
    this.follow(delta.contextId);
    // No peer on the topic: gossip would reach nobody, so nothing is sealed, signed or sent (a
    // tenth of a lone node's `set`). A peer that subscribes later learns of it by heads and pulls it.
    // The group's first write still names its key, as it does with peers.
    if (this.d.network.topicPeers(topic).length === 0) {
      const reg = this.d.locate(delta.contextId);
      if (reg && !reg.group.keyId) await this.d.keys.current(reg.group.id).catch(() => undefined);
      return;
    }
    try {
      const reg = this.d.locate(delta.contextId);
      if (!reg) return;
      const message = await this.sealed(reg, delta).catch((e: unknown) => {
        this.d.logger.debug({ contextId: delta.contextId, err: (e as Error).message }, 'no group key: announcing the delta by its heads');
        return undefined;
      });
      if (message && message.byteLength <= MAX_GOSSIP_BYTES) await this.d.network.publish(topic, message);
      else await this.announce(delta.contextId);
    } catch (e) {
      this.d.logger.debug({ contextId: delta.contextId, err: (e as Error).message }, 'publishing a delta failed (catch-up repairs it)');
    }
  }

  private async sealed(reg: Registration, d: DeltaRecord): Promise<Uint8Array> {
    const { keyId, key } = await this.d.keys.current(reg.group.id);
    const body: DeltaBody = {
      artifact: d.artifact,
      rootHash: d.rootHash,
      timestampMs: d.timestampMs,
      ...(d.events ? { events: d.events } : {}),
      ...(d.delegation ? { delegation: d.delegation } : {}),
    };
    const sealedBody = seal(key, Buffer.from(JSON.stringify(body)));
    return encodeJson({ type: 'delta', contextId: d.contextId, id: d.id, parents: d.parents, origin: d.origin, author: d.author, hlc: d.hlc, signature: d.signature, keyId, ...sealedBody });
  }

  private async announce(contextId: string): Promise<void> {
    const meta = await this.d.records.getMeta(contextId);
    if (!meta || this.d.network.topicPeers(contextTopic(contextId)).length === 0) return;
    await this.d.network.publish(contextTopic(contextId), encodeJson({ type: 'heads', contextId, heads: meta.dagHeads, rootHash: meta.rootHash }));
  }

  // ——— receive path ———

  private async onGossip(contextId: string, msg: GossipMessage): Promise<void> {
    const raw = decodeJson(msg.data);
    const drop = (penalty: PenaltyReason, why: string) => this.d.network.penalize(msg.from, penalty, why.slice(0, 200));
    if (!raw) return drop('invalid_message', 'context gossip is not a JSON object');
    const reg = this.d.locate(contextId);
    if (!reg) return;
    if (raw.type === 'heads') {
      const heads = parseIds(raw.heads);
      if (raw.contextId !== contextId || !heads) return drop('invalid_message', 'heads message for another context or malformed');
      if (memberAccount(reg, msg.from) === undefined) return drop('unauthorized', `heads from ${msg.from}, not a member`);
      this.status.heard(contextId, msg.from);
      const missing: string[] = [];
      for (const h of heads) if (!(await this.applier.knows(contextId, h))) missing.push(h);
      this.status.advertised(contextId, missing);
      if (missing.length > 0) this.chase.run(contextId, msg.from, missing);
      return;
    }
    if (raw.type !== 'delta') return drop('invalid_message', `unknown context gossip type ${String(raw.type).slice(0, 32)}`);
    const head = parseHead(raw);
    if (typeof head === 'string') return drop('invalid_message', `delta: ${head}`);
    if (head.contextId !== contextId) return drop('invalid_message', 'a delta for another context on this topic');
    const verdict = verifyHead(reg, head);
    if (!verdict.ok) return drop(verdict.penalty, verdict.why);
    if (memberAccount(reg, msg.from) !== undefined) this.status.heard(contextId, msg.from);
    if (await this.applier.knows(contextId, head.id)) return;
    if (!isHex64(raw.keyId) || typeof raw.nonce !== 'string' || typeof raw.ciphertext !== 'string') return drop('invalid_message', 'delta without a seal');
    const key = await this.d.keys.get(reg.group.id, raw.keyId, msg.from);
    if (!key) {
      this.status.reason(contextId, 'key_unavailable', `no peer gave the key ${raw.keyId.slice(0, 12)}… of group ${reg.group.id.slice(0, 12)}…; pulling the delta over the stream`);
      this.chase.run(contextId, msg.from, [head.id]);
      return;
    }
    this.status.clear(contextId, 'key_unavailable');
    const plain = open(key, raw.nonce, raw.ciphertext);
    const body = plain ? parseBody(decodeJson(plain)) : 'the seal does not open with the group key';
    if (typeof body === 'string') {
      this.status.quarantine(contextId, 'decrypt_failed', `delta ${head.id.slice(0, 12)}…: ${body}`);
      return drop('invalid_message', `delta ${head.id}: ${body}`);
    }
    const record = toRecord(head, body);
    const full = verifyRecord(reg, record);
    if (!full.ok) {
      this.status.quarantine(contextId, 'decrypt_failed', full.why);
      return drop(full.penalty, full.why);
    }
    this.hlc.observe(head.hlc);
    const outcome = await this.applier.receive(record, msg.from);
    if (outcome === 'pending') this.chase.run(contextId, msg.from, [head.id]);
  }

  // ——— catch-up ———

  /**
   * Pulls what `peer` holds of a context; one exchange per (context, peer) at a time. Only from a
   * member's node: gossip's publisher may be any subscriber of the topic (one that republished a
   * member's sealed delta, say), and a snapshot's state rows are taken on the sender's word.
   */
  private pull(contextId: string, peer: PeerKey): Promise<boolean> {
    const reg = this.d.locate(contextId);
    if (!reg || memberAccount(reg, peer) === undefined || this.removal(contextId)) return Promise.resolve(false);
    return this.life.pull(`${contextId}|${peer}`, () => this.pullNow(contextId, peer));
  }

  private async pullNow(contextId: string, peer: PeerKey): Promise<boolean> {
    const meta = await this.d.records.getMeta(contextId);
    const reg = this.d.locate(contextId);
    if (!meta || !reg || this.life.signal.aborted) return false;
    const fresh = meta.rootHash === UNINITIALIZED_HASH && (await this.applier.dag(contextId)).size <= 1;
    this.status.set(contextId, fresh ? 'receivingSnapshot' : 'syncing');
    try {
      if (fresh) await this.snapshotFrom(reg, contextId, peer, false);
      else if ((await this.backfillFrom(reg, meta, peer)) === 'snapshot') {
        this.status.set(contextId, 'receivingSnapshot');
        try {
          await this.snapshotFrom(reg, contextId, peer, true);
        } catch (e) {
          if (!(e instanceof PeerNetworkError) || this.life.signal.aborted) throw e;
          // a snapshot cut short (a relay's data limit cuts it every time): the deltas instead, in
          // batches that keep what arrived, no snapshot advice asked for
          this.d.logger.debug({ contextId, peer, err: e.message }, 'snapshot cut short; backfilling in batches');
          this.status.set(contextId, 'syncing');
          await this.backfillFrom(reg, (await this.d.records.getMeta(contextId)) ?? meta, peer, false);
        }
      }
      this.status.heard(contextId, peer);
      this.status.succeeded(contextId);
      this.status.set(contextId, 'idle');
      return true;
    } catch (e) {
      const kind = e instanceof PeerNetworkError ? e.kind : 'error';
      const message = (e as Error).message;
      this.status.failed(contextId, message);
      if (!(e instanceof PeerNetworkError && e.kind === 'refused' && /not hold|NotMaterialized/.test(message))) this.status.reason(contextId, 'pull_failed', `${peer.slice(0, 12)}…: ${message}`);
      this.status.set(contextId, 'backingOff');
      this.d.logger.debug({ contextId, peer, kind, err: message }, 'context pull failed');
      return false;
    }
  }

  /**
   * Every delta the peer has and this node lacks: received whole first (the exchange's deadline
   * covers the transfer, not the applying), then verified and applied parents first. Answers
   * 'snapshot' when the peer advises one (this node is far behind and holds nothing the peer lacks;
   * not asked for with `adviseSnapshot` false). A stream that breaks after whole frames keeps them
   * and asks again from the heads they left (a relay cutting circuits past its data limit).
   */
  private async backfillFrom(reg: Registration, meta: ContextMeta, peer: PeerKey, adviseSnapshot = true): Promise<'done' | 'snapshot'> {
    const signal = this.life.signal;
    for (let batch = 1; ; batch++) {
      const received: unknown[] = [];
      // the heads, their nearest ancestors and a few further back (dag.ts `reachingFrontier`): a peer
      // that has not yet seen our newest deltas (even many of them: we wrote while apart) still knows
      // some of these, and sends only what we lack, not its whole history
      const heads = (await this.applier.dag(meta.id)).reachingFrontier(meta.dagHeads, BACKFILL_FRONTIER);
      const request = { contextId: meta.id, heads, ...(adviseSnapshot ? { snapshotAbove: this.opts.snapshotAbove } : {}) };
      let cut: unknown;
      try {
        for await (const frame of this.d.router.requestStream(peer, KINDS.backfill, request, frameOpts(this.opts.requestTimeoutMs, signal))) {
          if (typeof frame.snapshotAdvised === 'number') return 'snapshot';
          if (Array.isArray(frame.deltas)) received.push(...frame.deltas);
        }
      } catch (e) {
        cut = e;
      }
      // the whole frames that arrived are kept, even when the stream broke after them (a relay
      // cutting a circuit past its data limit): parents come first, so they advance the heads
      for (const raw of received) await this.take(reg, meta.id, raw, peer);
      if (cut === undefined) return 'done';
      const before = meta.dagHeads.join();
      const now = await this.d.records.getMeta(meta.id);
      // the rest in another batch, on a new stream (a new circuit), while each batch moves the heads
      if (!(cut instanceof PeerNetworkError) || received.length === 0 || !now || now.dagHeads.join() === before || batch >= MAX_BACKFILL_BATCHES || signal.aborted) throw cut;
      this.d.logger.debug({ contextId: meta.id, peer, batch, received: received.length, err: (cut as Error).message }, 'backfill cut short; pulling the rest');
      meta = now;
    }
  }

  /** One record from the stream: parsed, verified, applied (or held); a bad one penalizes the sender. */
  private async take(reg: Registration, contextId: string, raw: unknown, peer: PeerKey): Promise<void> {
    const r = parseRecord(raw);
    if (typeof r === 'string' || r.contextId !== contextId) {
      this.d.network.penalize(peer, 'invalid_message', `backfill: ${typeof r === 'string' ? r : 'a delta of another context'}`);
      throw new PeerNetworkError('protocol', 'the peer sent a malformed delta');
    }
    const verdict = verifyRecord(reg, r);
    if (!verdict.ok) {
      this.d.network.penalize(peer, verdict.penalty, verdict.why);
      this.status.quarantine(contextId, 'decrypt_failed', verdict.why);
      return;
    }
    this.hlc.observe(r.hlc);
    await this.applier.receive(r, peer);
  }

  private async snapshotFrom(reg: Registration, contextId: string, peer: PeerKey, replace: boolean): Promise<void> {
    const snap: Snapshot = { rootHash: '', heads: [], rows: [], deltas: [] };
    const signal = this.life.signal;
    for await (const frame of this.d.router.requestStream(peer, KINDS.snapshot, { contextId }, frameOpts(this.opts.snapshotTimeoutMs, signal))) {
      if (frame.part === 'boundary') {
        const heads = parseIds(frame.heads);
        if (!isHex64(frame.rootHash) || !heads) throw this.bad(peer, 'snapshot boundary malformed');
        snap.rootHash = frame.rootHash;
        snap.heads = heads;
      } else if (frame.part === 'rows' && Array.isArray(frame.rows)) {
        for (const row of frame.rows) {
          // a key is 1+ bytes, a value may be empty (an application can store an empty row)
          if (!Array.isArray(row) || row.length !== 2 || typeof row[0] !== 'string' || typeof row[1] !== 'string' || !/^(?:[0-9a-f]{2})+$/.test(row[0]) || !/^(?:[0-9a-f]{2})*$/.test(row[1])) {
            throw this.bad(peer, 'snapshot row malformed');
          }
          snap.rows.push([row[0], row[1]]);
        }
      } else if (frame.part === 'deltas' && Array.isArray(frame.deltas)) {
        for (const raw of frame.deltas) {
          const r = parseRecord(raw);
          if (typeof r === 'string' || r.contextId !== contextId) throw this.bad(peer, `snapshot delta: ${typeof r === 'string' ? r : 'another context'}`);
          const verdict = verifyRecord(reg, r);
          if (!verdict.ok) throw this.bad(peer, verdict.why, verdict.penalty);
          snap.deltas.push(r);
        }
      } else throw this.bad(peer, 'unknown snapshot frame');
    }
    if (!snap.rootHash) throw new PeerNetworkError('protocol', 'the snapshot ended before its boundary');
    if (!(await this.applier.installSnapshot(contextId, snap, replace)) && replace) {
      // something was written here meanwhile that the snapshot does not hold: catch up delta by delta
      const meta = await this.d.records.getMeta(contextId);
      if (meta) for (const r of snap.deltas) if (!(await this.applier.knows(contextId, r.id))) await this.applier.receive(r, peer);
    }
  }

  private bad(peer: PeerKey, why: string, penalty: PenaltyReason = 'invalid_message'): PeerNetworkError {
    this.d.network.penalize(peer, penalty, why.slice(0, 200));
    return new PeerNetworkError('protocol', why);
  }

  private async onConnected(peer: PeerKey): Promise<void> {
    for (const contextId of this.life.followed()) {
      const reg = this.d.locate(contextId);
      if (reg && memberAccount(reg, peer) !== undefined) void this.pull(contextId, peer);
    }
  }

  private async heartbeat(): Promise<void> {
    for (const meta of await this.d.records.listMeta().catch(() => [] as ContextMeta[])) {
      if (this.life.signal.aborted) return;
      this.follow(meta.id);
      const holders = this.holders(meta.id);
      if (holders.length === 0) continue;
      const topic = contextTopic(meta.id);
      if (this.d.network.topicPeers(topic).length > 0) {
        await this.d.network.publish(topic, encodeJson({ type: 'heads', contextId: meta.id, heads: meta.dagHeads, rootHash: meta.rootHash })).catch(() => 0);
      }
      const behind = meta.rootHash === UNINITIALIZED_HASH || this.applier.pendingCount(meta.id) > 0;
      const peer = holders[Math.floor(Math.random() * holders.length)]!;
      if (behind) this.chase.run(meta.id, peer);
      else if (this.checking < MAX_CHECKS) void this.check(meta.id, peer);
    }
  }

  /**
   * The periodic check (the reference's sync loop, domain.md §2.7): one member's heads, asked over a
   * stream, and a pull when it holds one this node does not. Gossip alone can miss a change for good:
   * a delta and every later heartbeat lost between two nodes whose gossip streams died with the
   * connection they rode on (a relayed one replaced by a direct one, docs/network.md "NAT lab").
   */
  private async check(contextId: string, peer: PeerKey): Promise<void> {
    this.checking++;
    try {
      const answer = await this.d.router.request(peer, KINDS.heads, { contextId }, frameOpts(this.opts.requestTimeoutMs, this.life.signal));
      const heads = parseIds(answer.heads);
      if (!heads) throw this.bad(peer, 'heads answer malformed');
      for (const h of heads) if (!(await this.applier.knows(contextId, h))) return this.chase.run(contextId, peer, [h]);
    } catch (e) {
      this.d.logger.debug({ contextId, peer, err: (e as Error).message }, 'periodic heads check failed');
    } finally {
      this.checking--;
    }
  }

  /** Connected peers whose node key speaks for a member of the context's group. */
  private holders(contextId: string): PeerKey[] {
    const reg = this.d.locate(contextId);
    return reg ? this.d.network.peers().filter((p) => memberAccount(reg, p) !== undefined) : [];
  }

  private follow(contextId: string): void {
    if (!this.d.locate(contextId)) return;
    // only a member node's gossip is taken, and forwarded: checked by the network before it relays
    // (issue #37 item 7); the content is verified in onGossip
    const admit = (from: PeerKey) => {
      const reg = this.d.locate(contextId);
      return reg !== undefined && memberAccount(reg, from) !== undefined;
    };
    this.life.follow(contextId, () => this.d.network.subscribe(contextTopic(contextId), (msg) => this.onGossip(contextId, msg), admit));
  }
}
