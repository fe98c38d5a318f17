/**
 * Inviting a specialized node into a context (admin spec `POST /contexts/invite-specialized-node`;
 * admin-wire-a: `{contextId, inviterId?}` → `{data: {nonce}}`; domain.md §5.3, the reference's
 * protocol before core#3267): a read-only replica node that holds a context's state for the other
 * members — an always-on copy.
 *
 * 1. The inviting node mints a nonce, keeps it (5 minutes, single use) and publishes a discovery
 *    `{type: "SpecializedNodeDiscovery", nonce}` on the topic `mero_specialized_node_invites`; the
 *    route answers the nonce at once.
 * 2. A node configured `[specialized] enabled = true` (it follows that topic) asks the inviter,
 *    over the sync stream, `SpecializedNodeInviteRequest {nonce}`.
 * 3. The inviter admits it only when the nonce is its own and fresh, and — since hearth verifies
 *    no TEE attestation (the reference required a TDX quote) — only when its own config says
 *    `[specialized] admit_unattested = true`. It answers a ReadOnly invitation to the context's group
 *    and the context id; the nonce is spent.
 * 4. The specialized node joins the namespace with that invitation and the context, and syncs it.
 *
 * A read-only member's deltas are refused by every node (src/sync/verify.ts), so the replica can
 * hold and serve the state but not change it.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { ContextService } from '../contexts/index.ts';
import { badRequest, notFound, unavailable } from '../errors.ts';
import { type InvitationService, requireCapability } from '../governance/index.ts';
import type { NodeIdentity } from '../identity/identity.ts';
import {
  decodeJson,
  encodeJson,
  type GossipMessage,
  type JsonObject,
  type KindContext,
  type Network,
  type PeerKey,
  PeerRefusal,
  type StreamRouter,
} from '../network/index.ts';
import { isHex64 } from './wire.ts';

/** The reference's default discovery topic. */
export const SPECIALIZED_TOPIC = 'mero_specialized_node_invites';
export const SPECIALIZED_REQUEST = 'SpecializedNodeInviteRequest';
const NONCE_TTL_MS = 5 * 60_000;
const MAX_OPEN_NONCES = 256;

export interface SpecializedDeps {
  network: Network;
  router: StreamRouter;
  identity: NodeIdentity;
  contexts: ContextService;
  invitations: InvitationService;
  clock: Clock;
  logger: Logger;
  config: { enabled: boolean; admitUnattested: boolean };
}

interface Open {
  contextId: string;
  groupId: string;
  expiresAt: number;
}

export class SpecializedInvites {
  private readonly open = new Map<string, Open>();
  private off?: () => void;
  /** what happened to the invitations this node sent or answered (status and tests) */
  readonly stats = { sent: 0, admitted: 0, refused: 0, joined: 0, failed: 0 };

  constructor(private readonly d: SpecializedDeps) {
    d.router.register(SPECIALIZED_REQUEST, (req, ctx) => this.serve(req, ctx), { maxRequestBytes: 1024, timeoutMs: 10_000 });
  }

  start(): void {
    if (this.d.config.enabled) this.off = this.d.network.subscribe(SPECIALIZED_TOPIC, (msg) => this.onDiscovery(msg));
  }

  stop(): void {
    this.off?.();
  }

  /** The route: checks the context and this node's right to invite, publishes a discovery, answers the nonce. */
  async invite(contextId: string, inviterId?: string): Promise<{ nonce: string }> {
    const reg = this.d.contexts.registration(contextId);
    if (!reg) throw notFound(`context '${contextId}' not found`);
    requireCapability(reg.ns, reg.group, this.d.identity.accountId, 'CAN_INVITE_MEMBERS');
    if (inviterId !== undefined) {
      const owned = await this.d.contexts.identities(contextId, true);
      if (!owned.includes(inviterId)) throw badRequest(`inviterId ${inviterId} is not an identity this node holds in context '${contextId}'`);
    }
    const now = this.d.clock.now();
    for (const [n, o] of this.open) if (o.expiresAt < now) this.open.delete(n);
    if (this.open.size >= MAX_OPEN_NONCES) throw unavailable('too many specialized-node invitations are open; try again in a few minutes');
    const nonce = randomBytes(32).toString('hex');
    this.open.set(nonce, { contextId, groupId: reg.group.id, expiresAt: now + NONCE_TTL_MS });
    this.stats.sent++;
    await this.d.network.publish(SPECIALIZED_TOPIC, encodeJson({ type: 'SpecializedNodeDiscovery', nonce }));
    return { nonce };
  }

  /** The inviter's side of step 3. */
  private async serve(req: JsonObject, ctx: KindContext): Promise<JsonObject> {
    if (!isHex64(req.nonce)) {
      this.d.network.penalize(ctx.peer, 'invalid_message', `${SPECIALIZED_REQUEST} needs a nonce`);
      throw new PeerRefusal(`${SPECIALIZED_REQUEST} needs a nonce`);
    }
    const o = this.open.get(req.nonce);
    if (!o || o.expiresAt < this.d.clock.now()) throw new PeerRefusal('unknown or expired nonce');
    if (!this.d.config.admitUnattested) {
      this.stats.refused++;
      this.d.logger.warn({ peer: ctx.peer, contextId: o.contextId }, 'a specialized node answered, but this node admits none without a TEE attestation it could verify ([specialized] admit_unattested)');
      throw new PeerRefusal('this node admits specialized nodes only with a verifiable TEE attestation, which hearth does not check; set [specialized] admit_unattested = true on the inviting node to admit read-only replicas without one');
    }
    this.open.delete(req.nonce);
    const { invitation } = await this.d.invitations.invite(o.groupId, { invitedRole: 2, expirationSecs: 600 });
    this.stats.admitted++;
    return { contextId: o.contextId, invitation: invitation as unknown as JsonObject };
  }

  /** The specialized node's side of steps 2 and 4. */
  private async onDiscovery(msg: GossipMessage): Promise<void> {
    const raw = decodeJson(msg.data);
    if (raw?.type !== 'SpecializedNodeDiscovery' || !isHex64(raw.nonce)) {
      this.d.network.penalize(msg.from, 'invalid_message', 'malformed specialized-node discovery');
      return;
    }
    await this.answer(msg.from, raw.nonce).catch((e: unknown) => {
      this.stats.failed++;
      this.d.logger.info({ inviter: msg.from, err: (e as Error).message }, 'answering a specialized-node invitation failed');
    });
  }

  private async answer(inviter: PeerKey, nonce: string): Promise<void> {
    const answer = await this.d.router.request(inviter, SPECIALIZED_REQUEST, { nonce }, { timeoutMs: 10_000, maxResponseFrameBytes: 64 * 1024 });
    if (!isHex64(answer.contextId)) throw new Error('the inviter answered no context');
    const joined = await this.d.invitations.join(answer.invitation);
    if (joined.pending) throw new Error('the namespace could not be fetched from the inviter');
    await this.d.contexts.join(answer.contextId);
    this.stats.joined++;
    this.d.logger.info({ inviter, contextId: answer.contextId }, 'joined a context as a specialized (read-only) node');
  }
}
