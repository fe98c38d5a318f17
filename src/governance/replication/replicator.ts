/**
 * Governance replication (issue #12; domain.md §1.3–§1.5, §4.2, §4.5): namespace logs travel
 * between member nodes.
 *
 * - Every op authored here is published on the namespace's topic `ns/<hex>`; when no peer is
 *   subscribed yet it is pushed to the connected member nodes directly (`NamespaceOpPush`).
 * - An op received by gossip or push is parsed, checked to come from a key that speaks (or once
 *   spoke) for an account of the namespace, and ingested (log.ts checks id, signature and seq and
 *   folds it). One whose parents are missing waits here while this node pulls from the sender.
 * - Pulls (`NamespaceBackfillRequest` with this node's heads and their nearest ancestors → the ops
 *   it lacks, and only those) run on connect, when a heartbeat advertises heads this node does not
 *   know, and on `POST /groups/{g}/sync`.
 * - A joiner with an invitation fetches the namespace's whole log from the inviter or any
 *   admitter (`NamespaceJoinRequest`), then authors its join op and pushes it to the member nodes
 *   until one of them answers: until then its key is bound nowhere but here, so its gossip, heads
 *   and pulls are all refused, and a lost push would leave it outside for good.
 *
 * Whatever a peer sends, the worst outcome is a dropped message and a penalty (network.penalize);
 * nothing here throws into the network, and every wait has a deadline and the replicator's signal.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import {
  decodeJson,
  encodeJson,
  Follower,
  type GossipMessage as RawGossip,
  type JsonObject,
  type KindContext,
  MAX_FRAME_BYTES,
  namespaceTopic,
  type Network,
  type PeerKey,
  PeerNetworkError,
  PeerRefusal,
  type PenaltyReason,
  type StreamRouter,
} from '../../network/index.ts';
import { isMember } from '../authority.ts';
import { requireInviter } from '../invitations/inviter.ts';
import { requireNotBanned, requireNotRevoked, requireUnused } from '../invitations/admission.ts';
import { hexOf, parseInvitation, signatureValid, type SignedInvitation } from '../invitations/codec.ts';
import { INVITATION_OPS } from '../invitations/ops.ts';
import type { Governance, IngestResult, OpsApplied } from '../log.ts';
import { accountOfKey, everBound } from '../signers.ts';
import type { GovOp, NamespaceState } from '../types.ts';
import { parseCredential } from '../../identity/credentials.ts';
import { UnansweredJoins } from './join-push.ts';
import { isHex64, KIND, MAX_HEADS, MAX_OP_BYTES, opFrames, parseGossip, parseIds, parseOp, parseOpsFrame } from './wire.ts';

export interface ReplicatorOptions {
  /** heads heartbeat on every namespace topic (domain.md §1.4 NamespaceStateHeartbeat) */
  heartbeatMs: number;
  /** deadline of one pull or join exchange */
  requestTimeoutMs: number;
  /** deadline of a dial to an invitation's admitter address */
  dialTimeoutMs: number;
  /** ops held for missing parents, per namespace */
  maxWaiting: number;
  /** how long a held op waits for its parents, and how long an unanswered join op is pushed again */
  waitingTtlMs: number;
  /** after a join op's push that no member answered: the waits before the next tries (then the heartbeat's) */
  joinRetryMs: readonly number[];
}

export const REPLICATOR_DEFAULTS: ReplicatorOptions = {
  heartbeatMs: 10_000,
  requestTimeoutMs: 15_000,
  dialTimeoutMs: 5_000,
  maxWaiting: 1024,
  waitingTtlMs: 5 * 60_000,
  joinRetryMs: [300, 1_500],
};

export interface ReplicatorDeps {
  governance: Governance;
  network: Network;
  router: StreamRouter;
  clock: Clock;
  logger: Logger;
  options?: Partial<ReplicatorOptions>;
  /** runs on every peer connection and heartbeat (pending joins retry from here) */
  onTick?: () => Promise<void>;
  /** an invitation's admitter address that answered a dial: keep it (network.keep, address book) */
  onDialed?: (address: string) => Promise<void>;
}

/** Counters read by metrics and the network status route. */
export interface ReplicationStats {
  gossipIn: number;
  gossipOut: number;
  opsIngested: number;
  /** stored without effect: the fold refused them (authority, conflicts) */
  opsWithoutEffect: number;
  /** dropped before ingest, by penalty reason (and held ops evicted) */
  dropped: Record<string, number>;
  pulls: { ok: number; failed: number };
  served: number;
  /** ops sent to peers in answer to their pulls and joins */
  opsServed: number;
}

interface Waiting {
  op: GovOp;
  from: PeerKey;
  at: number;
}

/** A message of another domain on a namespace topic: the namespace, the decoded object, its signed origin. */
export type TopicMessageHandler = (namespaceId: string, message: JsonObject, from: PeerKey) => void | Promise<void>;

const frameOpts = (timeoutMs: number, signal: AbortSignal) => ({ timeoutMs, maxResponseFrameBytes: MAX_FRAME_BYTES, signal });

export class GovernanceReplicator {
  readonly stats: ReplicationStats = { gossipIn: 0, gossipOut: 0, opsIngested: 0, opsWithoutEffect: 0, dropped: {}, pulls: { ok: 0, failed: 0 }, served: 0, opsServed: 0 };
  private readonly opts: ReplicatorOptions;
  private readonly waiting = new Map<string, Map<string, Waiting>>();
  /** this node's join ops no member has answered: pushed again on connect and heartbeat */
  private readonly joins: UnansweredJoins;
  /** the followed namespace topics, listeners, heartbeat and pulls in flight: stop() ends them */
  private readonly life = new Follower();
  /** other domains' messages on the namespace topics, by `type` (migration heartbeats: src/upgrades/heartbeats.ts) */
  private readonly otherKinds = new Map<string, TopicMessageHandler>();

  constructor(private readonly d: ReplicatorDeps) {
    this.opts = { ...REPLICATOR_DEFAULTS, ...d.options };
    const signal = this.life.signal;
    this.joins = new UnansweredJoins({ push: (op, only) => this.push(op, only), now: () => d.clock.now(), signal, retryMs: this.opts.joinRetryMs, ttlMs: this.opts.waitingTtlMs });
    const serve = { maxRequestBytes: 64 * 1024, timeoutMs: 60_000 };
    d.router.register(KIND.backfill, (req, ctx) => this.serveBackfill(req, ctx), serve);
    d.router.register(KIND.join, (req, ctx) => this.serveJoin(req, ctx), serve);
    d.router.register(KIND.push, (req, ctx) => this.servePush(req, ctx), { maxRequestBytes: MAX_OP_BYTES + 1024, timeoutMs: 10_000 });
  }

  start(): void {
    for (const ns of this.d.governance.namespaces()) this.follow(ns.id);
    this.life.onStop(this.d.governance.onOps((e) => this.onOps(e)));
    this.life.onStop(this.d.network.onPeer((e) => e.type === 'connected' && this.onConnected(e.peer)));
    this.life.every(this.opts.heartbeatMs, () => this.heartbeat());
  }

  stop(): Promise<void> {
    return this.life.stop();
  }

  /**
   * Takes the namespace-topic messages of `type` (a JSON object with that `type`) away from the op
   * parser and hands them to `handler`, which checks them itself; only peers whose key speaks, or
   * once spoke, for an account of the namespace get that far (follow). Answers the unregistration.
   */
  onTopicMessage(type: string, handler: TopicMessageHandler): () => void {
    if (type === 'op' || type === 'heads') throw new Error(`"${type}" messages are the replicator's own`);
    this.otherKinds.set(type, handler);
    return () => void this.otherKinds.delete(type);
  }

  /** Namespaces this node follows on the network (subscribed topics). */
  followed(): string[] {
    return [...this.life.followed()];
  }

  /** This node's join ops that no member node has answered yet (they are pushed again). */
  unansweredJoins(): number {
    return this.joins.size;
  }

  /** Ops held for want of their parents, per namespace. */
  waitingCount(namespaceId: string): number {
    return this.waiting.get(namespaceId)?.size ?? 0;
  }

  /**
   * Pulls a namespace from every connected peer that holds it (topic peers and member nodes),
   * within the deadline. Resolves with how many peers answered.
   */
  async syncNamespace(namespaceId: string, timeoutMs = this.opts.requestTimeoutMs): Promise<{ peers: number; answered: number }> {
    const topicPeers = this.d.network.topicPeers(namespaceTopic(namespaceId));
    const state = this.d.governance.stateOf(namespaceId);
    const members = state ? this.d.network.peers().filter((p) => this.memberAccount(state, p) !== undefined) : [];
    const peers = [...new Set([...topicPeers, ...members])];
    const results = await Promise.all(peers.map((p) => this.pull(namespaceId, p, { timeoutMs })));
    return { peers: peers.length, answered: results.filter(Boolean).length };
  }

  /**
   * Fetches the log of the namespace holding an invitation's group from the inviter or an
   * admitter (dialing the invitation's address hints). `held` when this node then holds the group;
   * otherwise `refusal` is the reason a member peer refused the invitation itself (revoked, used,
   * a removal since it was issued, an inviter without authority), if one did.
   */
  async fetchForInvitation(inv: SignedInvitation, signal?: AbortSignal): Promise<{ held: boolean; refusal?: string }> {
    const groupId = hexOf(inv.invitation.group_id);
    const stop = AbortSignal.any([this.life.signal, ...(signal ? [signal] : [])]);
    const addrs = (inv.admitter_addrs ?? []).slice(0, 8);
    const dialed = await Promise.allSettled(addrs.map((a) => this.d.network.dial(a, { timeoutMs: this.opts.dialTimeoutMs, signal: stop })));
    for (const [i, r] of dialed.entries()) {
      if (r.status === 'fulfilled') await this.d.onDialed?.(addrs[i]!).catch((e: unknown) => this.d.logger.debug({ err: (e as Error).message }, 'keeping an admitter address failed'));
    }
    const inviter = hexOf(inv.invitation.inviter_identity);
    const reached = dialed.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const candidates = [...new Set([inviter, ...reached, ...this.d.network.peers()])].filter((p) => this.d.network.peers().includes(p));
    let refusal: string | undefined;
    for (const peer of candidates) {
      if (stop.aborted) return { held: false, refusal };
      try {
        for await (const frame of this.d.router.requestStream(peer, KIND.join, { groupId, invitation: inv as unknown as JsonObject }, frameOpts(this.opts.requestTimeoutMs, stop))) {
          const parsed = parseOpsFrame(frame);
          if (typeof parsed === 'string') {
            this.drop(peer, 'invalid_message', `backfill: ${parsed}`);
            break;
          }
          this.account(peer, await this.d.governance.ingest(parsed.namespaceId, parsed.ops, { allowGenesis: true }));
        }
      } catch (e) {
        const message = (e as Error).message;
        if (e instanceof PeerNetworkError && e.kind === 'refused' && /^invitation /.test(message)) refusal = message.slice(0, 300);
        this.d.logger.debug({ peer, err: message }, 'namespace join exchange failed');
        continue;
      }
      const located = this.d.governance.locate(groupId);
      if (located) {
        this.follow(located.ns.id);
        return { held: true };
      }
    }
    return { held: false, refusal };
  }

  // ——— inbound ———

  private async onGossip(namespaceId: string, msg: RawGossip): Promise<void> {
    this.stats.gossipIn++;
    const raw = decodeJson(msg.data);
    const other = typeof raw?.type === 'string' ? this.otherKinds.get(raw.type) : undefined;
    if (other) return other(namespaceId, raw!, msg.from);
    const parsed = parseGossip(raw);
    if (typeof parsed === 'string') return this.drop(msg.from, 'invalid_message', `gossip: ${parsed}`);
    if (parsed.type === 'heads') {
      if (parsed.namespaceId !== namespaceId) return this.drop(msg.from, 'invalid_message', `heads for namespace ${parsed.namespaceId} on another topic`);
      if (parsed.heads.some((h) => !this.d.governance.knows(namespaceId, h))) void this.pull(namespaceId, msg.from);
      return;
    }
    await this.receiveOp(namespaceId, parsed.op, msg.from);
  }

  /** Checks and ingests one op from a peer; true when it was stored. */
  private async receiveOp(namespaceId: string, op: GovOp, from: PeerKey): Promise<boolean> {
    if (op.namespaceId !== namespaceId) {
      this.drop(from, 'invalid_message', `op for namespace ${op.namespaceId} on another topic`);
      return false;
    }
    const state = this.d.governance.stateOf(namespaceId);
    if (!state) return false; // not a namespace this node holds: nothing to do
    if (this.d.governance.knows(namespaceId, op.id)) return false;
    if (!this.admissible(state, op)) {
      this.drop(from, 'unauthorized', `op from ${op.signer}, a key no member of the namespace speaks with`);
      return false;
    }
    const result = await this.d.governance.ingest(namespaceId, [op]);
    this.account(from, result);
    if (result.waiting.length > 0) {
      this.hold(namespaceId, op, from);
      void this.pull(namespaceId, from);
    }
    return result.added.length > 0;
  }

  /**
   * Gossip and push accept an op only from a key the namespace binds (now or earlier: a removed
   * member's older ops still reach lagging nodes), or one carrying a credential for an account that
   * is a member or is joining with an invitation. Everything else is a stranger's noise.
   */
  private admissible(state: NamespaceState, op: GovOp): boolean {
    if (everBound(state, op.signer)) return true;
    if (op.credential === undefined) return false;
    try {
      const cred = parseCredential(op.credential);
      if (cred.accountId !== op.account || cred.signingKey !== op.signer) return false;
    } catch {
      return false;
    }
    return op.kind === INVITATION_OPS.joined || Object.values(state.groups).some((g) => isMember(state, g, op.account));
  }

  private async serveBackfill(req: JsonObject, ctx: KindContext): Promise<AsyncIterable<unknown>> {
    const heads = parseIds(req.heads);
    if (!isHex64(req.namespaceId) || !heads) throw this.refuse(ctx.peer, 'invalid_message', 'backfill needs namespaceId and at most 64 heads');
    const state = this.d.governance.stateOf(req.namespaceId);
    if (!state) throw new PeerRefusal('unknown namespace');
    if (this.memberAccount(state, ctx.peer) === undefined) throw new PeerRefusal('not a member of this namespace');
    return this.frames(req.namespaceId, heads);
  }

  private async serveJoin(req: JsonObject, ctx: KindContext): Promise<AsyncIterable<unknown>> {
    if (!isHex64(req.groupId)) throw this.refuse(ctx.peer, 'invalid_message', 'join needs groupId');
    let inv: SignedInvitation;
    try {
      inv = parseInvitation(req.invitation);
    } catch (e) {
      throw this.refuse(ctx.peer, 'invalid_message', (e as Error).message);
    }
    if (hexOf(inv.invitation.group_id) !== req.groupId) throw this.refuse(ctx.peer, 'invalid_message', 'the invitation names another group');
    const located = this.d.governance.locate(req.groupId);
    if (!located) throw new PeerRefusal('unknown group');
    if (!signatureValid(inv)) throw this.refuse(ctx.peer, 'bad_signature', 'invalid invitation signature');
    if (Math.floor(this.d.clock.now() / 1000) > inv.invitation.expiration_timestamp) throw new PeerRefusal('invitation expired');
    try {
      requireInviter(located.ns, located.group, inv);
      // a revoked or spent invitation gets no log (the asker's own account, if it has one here, may re-fetch with its own)
      requireNotRevoked(located.group, inv);
      const asker = accountOfKey(located.ns, ctx.peer);
      requireUnused(located.group, inv, asker);
      requireNotBanned(located.ns, located.group, inv, asker, ctx.peer); // a removed node's key, whichever account it claims next
    } catch (e) {
      throw new PeerRefusal((e as Error).message);
    }
    return this.frames(located.ns.id, []);
  }

  private async servePush(req: JsonObject, ctx: KindContext): Promise<JsonObject> {
    const op = parseOp(req.op);
    if (typeof op === 'string') throw this.refuse(ctx.peer, 'invalid_message', op);
    const added = await this.receiveOp(op.namespaceId, op, ctx.peer);
    if (added) void this.publish(op); // relay: the pusher's other peers may not have it
    return { added };
  }

  private async *frames(namespaceId: string, heads: string[]): AsyncIterable<unknown> {
    this.stats.served++;
    const ops = await this.d.governance.lacking(namespaceId, heads);
    this.stats.opsServed += ops.length;
    yield* opFrames(namespaceId, ops);
  }

  // ——— outbound ———

  private onOps(e: OpsApplied): void {
    if (this.d.governance.namespace(e.namespaceId)) this.follow(e.namespaceId);
    // a joiner's own join op goes to the member nodes directly first: until they hold it, its key is
    // bound nowhere but here, and they refuse its gossip (follow), its heads and its pulls
    for (const op of e.local ? e.ops : []) {
      if (op.kind === INVITATION_OPS.joined) void this.joins.send(op).then(() => this.publish(op));
      else void this.publish(op, 'alone');
    }
    if (this.waiting.has(e.namespaceId)) void this.retryWaiting(e.namespaceId);
  }

  /**
   * Publishes an op on its namespace's topic; with 'alone' it is also pushed to the connected
   * member nodes directly when no peer is subscribed.
   */
  private async publish(op: GovOp, push?: 'alone'): Promise<void> {
    try {
      const sent = await this.d.network.publish(namespaceTopic(op.namespaceId), encodeJson({ type: 'op', op }));
      this.stats.gossipOut++;
      if (sent === 0 && push === 'alone') await this.push(op);
    } catch (e) {
      this.d.logger.debug({ op: op.id, err: (e as Error).message }, 'publishing a governance op failed (catch-up repairs it)');
    }
  }

  /** Pushes an op to the connected member nodes (or to those of `only`); true when one answered. */
  private async push(op: GovOp, only?: readonly PeerKey[]): Promise<boolean> {
    const state = this.d.governance.stateOf(op.namespaceId);
    if (!state || this.life.stopped) return false;
    const members = (only ?? this.d.network.peers()).filter((p) => this.memberAccount(state, p) !== undefined);
    const answers = await Promise.allSettled(members.map((p) => this.d.router.request(p, KIND.push, { op: op as unknown as JsonObject }, frameOpts(this.opts.requestTimeoutMs, this.life.signal))));
    const answered = answers.some((a) => a.status === 'fulfilled');
    if (!answered && members.length > 0) this.d.logger.debug({ op: op.id, members: members.length }, 'no member answered a governance op push');
    return answered;
  }

  /** Pulls what `peer` has of a namespace; one exchange per (namespace, peer) at a time. */
  private pull(namespaceId: string, peer: PeerKey, opts: { timeoutMs?: number } = {}): Promise<boolean> {
    return this.life.pull(`${namespaceId}|${peer}`, () => this.pullNow(namespaceId, peer, opts.timeoutMs ?? this.opts.requestTimeoutMs));
  }

  private async pullNow(namespaceId: string, peer: PeerKey, timeoutMs: number): Promise<boolean> {
    if (this.life.signal.aborted) return false;
    try {
      // our heads and their nearest ancestors: a peer that has not yet seen our newest ops skips
      // those heads, and with heads alone it would send its whole log (docs/governance.md "Catch-up")
      const heads = this.d.governance.frontier(namespaceId, MAX_HEADS);
      for await (const frame of this.d.router.requestStream(peer, KIND.backfill, { namespaceId, heads }, frameOpts(timeoutMs, this.life.signal))) {
        const parsed = parseOpsFrame(frame);
        if (typeof parsed === 'string' || parsed.namespaceId !== namespaceId) {
          this.drop(peer, 'invalid_message', `backfill: ${typeof parsed === 'string' ? parsed : 'a frame for another namespace'}`);
          break;
        }
        this.account(peer, await this.d.governance.ingest(namespaceId, parsed.ops));
      }
      this.stats.pulls.ok++;
      await this.retryWaiting(namespaceId);
      return true;
    } catch (e) {
      this.stats.pulls.failed++;
      const kind = e instanceof PeerNetworkError ? e.kind : 'error';
      this.d.logger.debug({ peer, namespaceId, kind, err: (e as Error).message }, 'governance pull failed');
      return false;
    }
  }

  private async heartbeat(): Promise<void> {
    const now = this.d.clock.now();
    for (const [nsId, held] of this.waiting) {
      for (const [id, w] of held) if (now - w.at > this.opts.waitingTtlMs) held.delete(id);
      if (held.size === 0) this.waiting.delete(nsId);
    }
    await this.joins.again();
    for (const nsId of this.life.followed()) {
      const topic = namespaceTopic(nsId);
      if (this.d.network.topicPeers(topic).length === 0) continue;
      const heads = this.d.governance.heads(nsId);
      await this.d.network.publish(topic, encodeJson({ type: 'heads', namespaceId: nsId, heads })).catch(() => 0);
    }
    await this.d.onTick?.().catch((e: unknown) => this.d.logger.debug({ err: (e as Error).message }, 'replication tick failed'));
  }

  private onConnected(peer: PeerKey): void {
    if (this.joins.size > 0) void this.joins.again(peer);
    for (const ns of this.d.governance.namespaces()) if (this.memberAccount(ns, peer) !== undefined) void this.pull(ns.id, peer);
    void this.d.onTick?.().catch((e: unknown) => this.d.logger.debug({ err: (e as Error).message }, 'replication tick failed'));
  }

  // ——— helpers ———

  private follow(namespaceId: string): void {
    // only gossip published by a node whose key speaks, or once spoke, for an account of the
    // namespace is taken and forwarded: checked by the network before it relays (issue #37 item 7).
    // Once, not now: a removed member's older ops still reach lagging nodes; the ops are checked in onGossip.
    const admit = (from: PeerKey) => {
      const state = this.d.governance.stateOf(namespaceId);
      return state !== undefined && everBound(state, from);
    };
    this.life.follow(namespaceId, () => this.d.network.subscribe(namespaceTopic(namespaceId), (msg) => this.onGossip(namespaceId, msg), admit));
  }

  /** The member account a peer's node key speaks for, if it is a member of some group here. */
  private memberAccount(state: NamespaceState, peer: PeerKey): string | undefined {
    const account = accountOfKey(state, peer);
    return account !== undefined && Object.values(state.groups).some((g) => isMember(state, g, account)) ? account : undefined;
  }

  private hold(namespaceId: string, op: GovOp, from: PeerKey): void {
    let held = this.waiting.get(namespaceId);
    if (!held) this.waiting.set(namespaceId, (held = new Map()));
    if (held.size >= this.opts.maxWaiting) {
      const oldest = held.keys().next().value;
      if (oldest !== undefined) held.delete(oldest);
      this.count('held_op_evicted');
    }
    held.set(op.id, { op, from, at: this.d.clock.now() });
  }

  private async retryWaiting(namespaceId: string): Promise<void> {
    const held = this.waiting.get(namespaceId);
    if (!held || held.size === 0) return;
    const result = await this.d.governance.ingest(namespaceId, [...held.values()].map((w) => w.op));
    for (const op of [...result.added, ...result.refused.map((r) => r.op)]) held.delete(op.id);
    for (const [id] of held) if (this.d.governance.knows(namespaceId, id)) held.delete(id);
    if (held.size === 0) this.waiting.delete(namespaceId);
  }

  /** Counts what an ingest did, penalizing the peer for ops no state could take. */
  private account(peer: PeerKey, result: IngestResult): void {
    this.stats.opsIngested += result.added.length;
    this.stats.opsWithoutEffect += result.rejected.length;
    for (const r of result.refused) this.drop(peer, /signature/.test(r.reason) ? 'bad_signature' : 'invalid_message', `op ${r.op.id}: ${r.reason}`);
  }

  private drop(peer: PeerKey, reason: PenaltyReason, detail: string): void {
    this.count(reason);
    this.d.network.penalize(peer, reason, detail.slice(0, 200));
  }

  private count(reason: string): void {
    this.stats.dropped[reason] = (this.stats.dropped[reason] ?? 0) + 1;
  }

  private refuse(peer: PeerKey, reason: PenaltyReason, message: string): PeerRefusal {
    this.drop(peer, reason, message);
    return new PeerRefusal(message);
  }
}
