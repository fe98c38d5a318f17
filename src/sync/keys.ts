/**
 * Group keys (domain.md §3.1 "Group / scope key", §4.5 key delivery and rotation): a random 32-byte
 * AES-256-GCM key per group seals the context deltas gossiped on its contexts' topics; its id is
 * SHA-256(key). The group's current key id is governance state (`group.key.set`, an op any member
 * may write, so every node agrees which key seals new deltas); the key itself never enters the log.
 * Nodes hold the keys they made or fetched (store space `sync.keys`, node-local) and hand a key
 * only to a peer whose node key speaks for a current member of the group (`GroupKeyRequest` on the
 * sync stream, whose Noise channel carries it encrypted and authenticated). A node that removes a
 * member rotates the key of that group and of the groups below it, so the removed member's node
 * cannot read later deltas: it can neither get the new key nor ask for catch-up any more.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { badRequest, forbidden, notFound } from '../errors.ts';
import {
  accountOfKey,
  type ApplierRegistry,
  type Governance,
  type GroupState,
  isMember,
  MEMBER_OPS,
  type NamespaceState,
  type OpsApplied,
  subtree,
} from '../governance/index.ts';
import { type JsonObject, type KindContext, type Network, type PeerKey, PeerRefusal, type StreamRouter } from '../network/index.ts';
import type { Space, Store } from '../store/store.ts';

export const KEY_OP = 'group.key.set';
export const KEY_REQUEST = 'GroupKeyRequest';

const HEX64 = /^[0-9a-f]{64}$/;
export const keyIdOf = (key: Uint8Array): string => createHash('sha256').update(key).digest('hex');

/** `group.key.set {keyId}`: any member of the group names the key new deltas are sealed with. */
export function registerKeyOps(registry: ApplierRegistry): void {
  registry.register(KEY_OP, ({ ns, op }) => {
    const keyId = op.body.keyId;
    if (typeof keyId !== 'string' || !HEX64.test(keyId)) throw badRequest('keyId must be 64 hex');
    const group = ns.groups[op.groupId];
    if (!group) throw notFound(`group '${op.groupId}' not found`);
    if (!isMember(ns, group, op.account)) throw forbidden(`account ${op.account} is not a member of group '${group.id}'`);
    group.keyId = keyId;
  });
}

export interface Sealed {
  keyId: string;
  /** 12 bytes, hex */
  nonce: string;
  /** AES-256-GCM ciphertext and its 16-byte tag, hex */
  ciphertext: string;
}

export function seal(key: Uint8Array, plaintext: Uint8Array): Omit<Sealed, 'keyId'> {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, nonce);
  const body = Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]);
  return { nonce: nonce.toString('hex'), ciphertext: body.toString('hex') };
}

/** The plaintext, or undefined when the seal does not open with this key. */
export function open(key: Uint8Array, nonceHex: string, ciphertextHex: string): Buffer | undefined {
  try {
    const body = Buffer.from(ciphertextHex, 'hex');
    const nonce = Buffer.from(nonceHex, 'hex');
    if (nonce.length !== 12 || body.length < 16) return undefined;
    const d = createDecipheriv('aes-256-gcm', key, nonce);
    d.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([d.update(body.subarray(0, body.length - 16)), d.final()]);
  } catch {
    return undefined;
  }
}

export interface GroupKeysDeps {
  store: Store;
  governance: Governance;
  /** this node's account */
  account: string;
  network?: Network;
  router?: StreamRouter;
  logger: Logger;
  requestTimeoutMs?: number;
}

export class GroupKeys {
  private readonly space: Space<{ key: string }>;
  private readonly cache = new Map<string, Buffer>();
  private off?: () => void;

  constructor(private readonly d: GroupKeysDeps) {
    this.space = d.store.space('sync.keys');
    d.router?.register(KEY_REQUEST, (req, ctx) => this.serve(req, ctx), { maxRequestBytes: 1024, timeoutMs: 5_000 });
  }

  start(): void {
    this.off = this.d.governance.onOps((e) => void this.onOps(e));
  }

  stop(): void {
    this.off?.();
  }

  /**
   * The key new deltas of `groupId` are sealed with: the group's current one (fetched from a member
   * peer when this node lacks it), or a fresh one this node makes and names when the group has none.
   * Throws when the current key is held by no reachable peer.
   */
  async current(groupId: string): Promise<{ keyId: string; key: Buffer }> {
    const { ns, group } = this.d.governance.requireGroup(groupId);
    if (!group.keyId) return this.rotate(ns, group);
    const key = await this.get(groupId, group.keyId);
    if (!key) throw new Error(`the key of group ${groupId} (${group.keyId.slice(0, 12)}…) is held by no reachable peer`);
    return { keyId: group.keyId, key };
  }

  /** A key by id: held here, else fetched from `hint` or any connected member of the group. */
  async get(groupId: string, keyId: string, hint?: PeerKey): Promise<Buffer | undefined> {
    const cached = this.cache.get(keyId) ?? (await this.load(groupId, keyId));
    if (cached) return cached;
    const { router, network } = this.d;
    if (!router || !network) return undefined;
    const located = this.d.governance.locate(groupId);
    if (!located) return undefined;
    const members = network.peers().filter((p) => this.memberOf(located.ns, located.group, p));
    // the hint (the delta's publisher) first when it is a member's node: it surely holds the key
    const peers = [...new Set([...(hint && members.includes(hint) ? [hint] : []), ...members])];
    for (const peer of peers) {
      try {
        const answer = await router.request(peer, KEY_REQUEST, { groupId, keyId }, { timeoutMs: this.d.requestTimeoutMs ?? 5_000, maxResponseFrameBytes: 1024 });
        const key = typeof answer.key === 'string' && HEX64.test(answer.key) ? Buffer.from(answer.key, 'hex') : undefined;
        if (!key || keyIdOf(key) !== keyId) {
          network.penalize(peer, 'invalid_message', `${KEY_REQUEST}: an answer that is not the key asked for`);
          continue;
        }
        await this.keep(groupId, key);
        return key;
      } catch (e) {
        this.d.logger.debug({ peer, groupId, err: (e as Error).message }, 'group key request failed');
      }
    }
    return undefined;
  }

  /** Makes a new key for a group, keeps it, and names it the group's current key. */
  private async rotate(ns: NamespaceState, group: GroupState): Promise<{ keyId: string; key: Buffer }> {
    const key = randomBytes(32);
    const keyId = keyIdOf(key);
    await this.keep(group.id, key);
    await this.d.governance.submit(ns.id, group.id, KEY_OP, { keyId });
    return { keyId, key };
  }

  private async keep(groupId: string, key: Buffer): Promise<void> {
    const keyId = keyIdOf(key);
    await this.space.put(`${groupId}/${keyId}`, { key: key.toString('hex') });
    this.cache.set(keyId, key);
  }

  private async load(groupId: string, keyId: string): Promise<Buffer | undefined> {
    const held = await this.space.get(`${groupId}/${keyId}`);
    if (!held) return undefined;
    const key = Buffer.from(held.key, 'hex');
    this.cache.set(keyId, key);
    return key;
  }

  private memberOf(ns: NamespaceState, group: GroupState, peer: PeerKey): boolean {
    const account = accountOfKey(ns, peer);
    return account !== undefined && isMember(ns, group, account);
  }

  private async serve(req: JsonObject, ctx: KindContext): Promise<JsonObject> {
    const { groupId, keyId } = req;
    if (typeof groupId !== 'string' || !HEX64.test(groupId) || typeof keyId !== 'string' || !HEX64.test(keyId)) {
      this.d.network?.penalize(ctx.peer, 'invalid_message', `${KEY_REQUEST} needs groupId and keyId`);
      throw new PeerRefusal(`${KEY_REQUEST} needs groupId and keyId`);
    }
    const located = this.d.governance.locate(groupId);
    if (!located) throw new PeerRefusal('unknown group');
    if (!this.memberOf(located.ns, located.group, ctx.peer)) throw new PeerRefusal('not a member of this group');
    const key = this.cache.get(keyId) ?? (await this.load(groupId, keyId));
    if (!key) throw new PeerRefusal('this node does not hold that key');
    return { key: key.toString('hex') };
  }

  /**
   * A member removed by this node's hand: the groups it could read through (the group and the
   * groups below it) get new keys, so later deltas are sealed with keys it cannot fetch.
   */
  private async onOps(e: OpsApplied): Promise<void> {
    if (!e.local) return;
    for (const op of e.ops) {
      if (op.kind !== MEMBER_OPS.removed) continue;
      const located = this.d.governance.locate(op.groupId);
      if (!located) continue;
      for (const g of subtree(located.ns, located.group.id)) {
        if (!g.keyId) continue;
        const fresh = this.d.governance.namespace(located.ns.id);
        const group = fresh?.groups[g.id];
        if (fresh && group) await this.rotate(fresh, group).catch((err: unknown) => this.d.logger.warn({ err, groupId: g.id }, 'rotating a group key failed'));
      }
    }
  }
}

