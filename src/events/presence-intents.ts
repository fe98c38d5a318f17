/**
 * Relayed presence for an account (admin spec "Delegated execution", Contexts table
 * `POST /contexts/{contextId}/presence-intents`, Events rule 3: "one relayed for an account names
 * that account"; reference `admin/handlers/context/presence_intent.rs` and
 * `calimero_node_primitives::presence`). No HTTP here.
 *
 * The device's signature over the `calimero/presence/1` statement is the credential and the
 * `authorProof` (`AccountProof<DeviceCert>`) ties the device key to its account. In order:
 * 1. the request decodes (400 naming the field; an over-long slice is 413);
 * 2. the statement is rebuilt from the path's context and the certificate's device key, its
 *    signature verifies under that key and the certificate verifies against its genesis (400);
 * 3. `sentAtMs` lies within 7 s of this node's clock, either way (400, the reference's
 *    `PRESENCE_MAX_SKEW_MS`);
 * 4. the context is registered in a group here (404), the account is a member of it (403) and the
 *    device is not revoked in its namespace (403);
 * 5. `seq` is above the highest this relay accepted for (context, device key) (400): a replay, or
 *    an update older than one already shown, is refused rather than shown again;
 * 6. the account's slot is set (TTL 7 s, as any presence heard from elsewhere) or, for
 *    `state: null`, cleared; the `Ephemeral` frame's `author` is the account id.
 */
import { AccountProofError, decodeDeviceAccountProof, verifyDeviceAccountProof } from '../identity/account-proof.ts';
import type { Clock } from '../clock.ts';
import { parseId } from '../crypto/ids.ts';
import { badRequest, forbidden, HearthError, notFound } from '../errors.ts';
import { type GroupState, isMember, type NamespaceState } from '../governance/index.ts';
import { PRESENCE_MAX_BYTES, PRESENCE_REMOTE_TTL_MS } from './constants.ts';
import { verifyPresenceSignature, type PresenceStatement } from './presence-intents-statement.ts';
import type { PresenceService } from './presence.ts';

/** Reference `PRESENCE_MAX_SKEW_MS` (= its presence TTL): how far `sentAtMs` may sit from our clock. */
export const PRESENCE_FRESHNESS_MS = 7000;

const U64_MAX = (1n << 64n) - 1n;
const FIELDS = ['state', 'seq', 'sentAtMs', 'signature', 'authorProof'] as const;
const HEX = /^([0-9a-fA-F]{2})*$/;

/** The body of `POST /contexts/{id}/presence-intents` (reference `PresenceIntentRequest`). */
export interface PresenceIntentRequest {
  /** hex of the slice; null retracts */
  state: string | null;
  seq: bigint;
  sentAtMs: bigint;
  /** hex, 64 bytes */
  signature: string;
  /** hex of borsh `AccountProof<DeviceCert>` */
  authorProof: string;
}

export interface PresenceIntentDeps {
  presence: PresenceService;
  clock: Clock;
  /** The namespace and group a context is registered in now; undefined when none holds it. */
  locateContext(contextId: string): { ns: NamespaceState; group: GroupState } | undefined;
}

/**
 * Validates the JSON body: exactly the five fields (an unknown one is refused, as the reference's
 * `deny_unknown_fields`), `state` present (null to retract), u64 integers exact.
 */
export function parsePresenceIntentRequest(body: unknown): PresenceIntentRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('Invalid request body: expected a JSON object');
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (!(FIELDS as readonly string[]).includes(key)) throw badRequest(`Invalid request body: unknown field body.${key} (expected ${FIELDS.join(', ')})`);
  }
  for (const key of FIELDS) if (!(key in b)) throw badRequest(`Invalid request body: body.${key} is required${key === 'state' ? ' (null to retract)' : ''}`);
  if (b.state !== null && typeof b.state !== 'string') throw badRequest('Invalid request body: body.state must be a hex string or null');
  for (const key of ['signature', 'authorProof'] as const) {
    if (typeof b[key] !== 'string') throw badRequest(`Invalid request body: body.${key} must be a hex string`);
  }
  return { state: b.state, seq: u64(b.seq, 'seq'), sentAtMs: u64(b.sentAtMs, 'sentAtMs'), signature: b.signature as string, authorProof: b.authorProof as string };
}

function u64(v: unknown, field: string): bigint {
  const n = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : undefined;
  if (n === undefined || n < 0n || n > U64_MAX) throw badRequest(`Invalid request body: body.${field} must be an unsigned 64-bit integer`);
  return n;
}

function hexBytes(s: string, field: string): Buffer {
  const t = s.trim();
  if (!HEX.test(t)) throw badRequest(`${field} is not hex`);
  return Buffer.from(t, 'hex');
}

export class PresenceIntentService {
  /** highest accepted seq per (context, device key), kept while a replay of it could still be fresh */
  private readonly seqs = new Map<string, { seq: bigint; keepUntil: number }>();
  private prunedAt = 0;

  constructor(private readonly d: PresenceIntentDeps) {}

  /** Verifies and publishes one relayed update; returns the account it was published for. */
  publish(rawContextId: string, req: PresenceIntentRequest): { accountId: string } {
    const contextId = parseId(rawContextId);
    if (!contextId) throw badRequest(`context id '${rawContextId}' is not valid: expected 64 hex characters`);

    let proof;
    try {
      proof = decodeDeviceAccountProof(hexBytes(req.authorProof, 'authorProof'));
    } catch (err) {
      if (err instanceof AccountProofError) throw badRequest(`authorProof is not a credential: ${err.message}`);
      throw err;
    }
    const state = req.state === null ? null : hexBytes(req.state, 'state');
    const signature = hexBytes(req.signature, 'signature');
    if (signature.length !== 64) throw badRequest('signature is not 64 bytes');
    if (state && state.length > PRESENCE_MAX_BYTES) {
      throw new HearthError('payload_too_large', `the presence slice is too large: ${state.length} bytes (at most ${PRESENCE_MAX_BYTES})`);
    }

    const cert = proof.statement;
    const statement: PresenceStatement = { contextId, author: cert.signPk, seq: req.seq, sentAtMs: req.sentAtMs, state };
    if (!verifyPresenceSignature(statement, signature)) throw badRequest('the signature does not verify under the author');
    try {
      verifyDeviceAccountProof(proof);
    } catch (err) {
      if (err instanceof AccountProofError) throw badRequest(`the device certificate does not verify: ${err.message}`);
      throw err;
    }

    const now = this.d.clock.now();
    const skew = req.sentAtMs - BigInt(now);
    if (skew > BigInt(PRESENCE_FRESHNESS_MS) || -skew > BigInt(PRESENCE_FRESHNESS_MS)) {
      throw badRequest(`the statement is outside the freshness window (sentAtMs must be within ${PRESENCE_FRESHNESS_MS} ms of the node's clock)`);
    }

    const reg = this.d.locateContext(contextId);
    if (!reg) throw notFound('Context not found');
    const account = cert.account;
    if (!isMember(reg.ns, reg.group, account)) throw forbidden(`the account ${account} is not a member of this context's group`);
    if (reg.ns.deviceBindings?.[account]?.[cert.device]?.revokedAt !== undefined) throw forbidden(`the device ${cert.device} is revoked here`);

    this.prune(now);
    const key = `${contextId}/${cert.signPk}`;
    const last = this.seqs.get(key);
    if (last && req.seq <= last.seq) throw badRequest(`stale seq: ${req.seq} is not above ${last.seq}, the last this node accepted from this device`);

    if (state === null) this.d.presence.clear(contextId, account);
    else this.d.presence.set(contextId, account, state, { ttlMs: PRESENCE_REMOTE_TTL_MS });
    // Kept twice the window: long enough that any statement it outranks has left the window.
    this.seqs.set(key, { seq: req.seq, keepUntil: now + 2 * PRESENCE_FRESHNESS_MS });
    return { accountId: account };
  }

  private prune(now: number): void {
    if (now - this.prunedAt < PRESENCE_FRESHNESS_MS) return;
    this.prunedAt = now;
    for (const [k, v] of this.seqs) if (v.keepUntil <= now) this.seqs.delete(k);
  }
}
