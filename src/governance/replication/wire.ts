/**
 * What governance replication puts on the wire (domain.md §1.4 `NamespaceGovernanceDelta` and
 * `NamespaceStateHeartbeat` on `ns/<hex>`; §1.5 `NamespaceBackfillRequest` and
 * `NamespaceJoinRequest` on the sync stream) and the strict parsing of what comes back. hearth's
 * encoding is JSON (docs/decisions.md): an op travels as the same JSON document it is signed and
 * stored as. Everything from a peer is parsed into a clean object here, field by field, before any
 * other code reads it; a malformed message is reported with why.
 */
import type { GovOp } from '../types.ts';
import { batches } from '../../network/index.ts';

/** A signed op may be at most 64 KiB (domain.md §1.4). */
export const MAX_OP_BYTES = 64 * 1024;
/** Heads on the wire (the reference caps governance heads at 32; a little headroom for concurrency). */
export const MAX_HEADS = 64;
/** Ops per backfill frame are packed up to this many bytes (frames stay far below MAX_FRAME_BYTES). */
export const BACKFILL_FRAME_BYTES = 512 * 1024;

export const KIND = {
  /** "send me every op of this namespace I lack, given my heads" */
  backfill: 'NamespaceBackfillRequest',
  /** "I hold an invitation to this group: send me its namespace's log" */
  join: 'NamespaceJoinRequest',
  /** "here is an op" (a direct delivery while the gossip mesh is not formed yet) */
  push: 'NamespaceOpPush',
} as const;

export type GossipMessage = { type: 'op'; op: GovOp } | { type: 'heads'; namespaceId: string; heads: string[] };

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;
const U64 = /^(0|[1-9][0-9]{0,19})$/;
const U64_MAX = 18_446_744_073_709_551_615n;
const KIND_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

export const isHex64 = (v: unknown): v is string => typeof v === 'string' && HEX64.test(v);
const isU64 = (v: unknown): v is string => typeof v === 'string' && U64.test(v) && BigInt(v) <= U64_MAX;

/** A list of distinct 64-hex ids of at most `max` entries, or undefined. */
export function parseIds(v: unknown, max = MAX_HEADS): string[] | undefined {
  if (!Array.isArray(v) || v.length > max || !v.every(isHex64)) return undefined;
  return new Set(v).size === v.length ? [...v] : undefined;
}

/** A governance op from a peer: a clean copy with exactly the envelope's fields, or why not. */
export function parseOp(raw: unknown): GovOp | string {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return 'op is not an object';
  const o = raw as Record<string, unknown>;
  for (const k of ['id', 'namespaceId', 'groupId', 'signer', 'account'] as const) if (!isHex64(o[k])) return `op.${k} must be 64 lowercase hex`;
  if (!isU64(o.seq) || o.seq === '0') return 'op.seq must be a positive u64 decimal string';
  if (!isU64(o.nonce)) return 'op.nonce must be a u64 decimal string';
  const parents = parseIds(o.parents);
  if (!parents) return `op.parents must be at most ${MAX_HEADS} distinct 64-hex ids`;
  if (typeof o.kind !== 'string' || !KIND_NAME.test(o.kind)) return 'op.kind must be an op kind name';
  if (o.body === null || typeof o.body !== 'object' || Array.isArray(o.body)) return 'op.body must be an object';
  if (!Number.isSafeInteger(o.timestampMs) || (o.timestampMs as number) < 0) return 'op.timestampMs must be unix milliseconds';
  if (typeof o.signature !== 'string' || !HEX128.test(o.signature)) return 'op.signature must be 64 bytes of lowercase hex';
  if (o.credential !== undefined && (typeof o.credential !== 'string' || !/^[0-9a-f]{2,1024}$/.test(o.credential))) return 'op.credential must be hex';
  return {
    id: o.id as string,
    namespaceId: o.namespaceId as string,
    groupId: o.groupId as string,
    seq: o.seq,
    parents,
    signer: o.signer as string,
    account: o.account as string,
    nonce: o.nonce,
    kind: o.kind,
    body: o.body as Record<string, unknown>,
    timestampMs: o.timestampMs as number,
    ...(o.credential !== undefined ? { credential: o.credential as string } : {}),
    signature: o.signature,
  };
}

/** A gossip message on a namespace topic, or why not. */
export function parseGossip(raw: Record<string, unknown> | undefined): GossipMessage | string {
  if (!raw) return 'gossip is not a JSON object';
  if (raw.type === 'op') {
    const op = parseOp(raw.op);
    return typeof op === 'string' ? op : { type: 'op', op };
  }
  if (raw.type === 'heads') {
    const heads = parseIds(raw.heads);
    if (!isHex64(raw.namespaceId) || !heads) return 'heads message must name a namespace and at most 64 heads';
    return { type: 'heads', namespaceId: raw.namespaceId, heads };
  }
  return `unknown gossip type: ${String(raw.type).slice(0, 32)}`;
}

/** The ops of one backfill frame (`{namespaceId, ops}`), or why not. */
export function parseOpsFrame(raw: Record<string, unknown>): { namespaceId: string; ops: GovOp[] } | string {
  if (!isHex64(raw.namespaceId) || !Array.isArray(raw.ops)) return 'frame must carry namespaceId and ops';
  const ops: GovOp[] = [];
  for (const r of raw.ops) {
    const op = parseOp(r);
    if (typeof op === 'string') return op;
    ops.push(op);
  }
  return { namespaceId: raw.namespaceId, ops };
}

/** Packs ops into frames of at most BACKFILL_FRAME_BYTES of JSON each (one op per frame at worst). */
export function* opFrames(namespaceId: string, ops: readonly GovOp[]): Generator<{ namespaceId: string; ops: GovOp[] }> {
  for (const batch of batches(ops, BACKFILL_FRAME_BYTES)) yield { namespaceId, ops: batch };
}
