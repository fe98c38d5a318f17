/**
 * What context sync puts on the wire (issue #13; domain.md §1.4 `StateDelta` and `HashHeartbeat` on
 * the context's topic, §1.5 the sync stream's delta, heads and snapshot requests), and the strict
 * parsing of what comes back. hearth's encoding is JSON (docs/decisions.md). A delta travels as:
 *
 * - gossip `{type:"delta", contextId, id, parents, origin, author, hlc, signature, keyId, nonce,
 *   ciphertext}` where the ciphertext is AES-256-GCM under the group key of the JSON
 *   `{artifact, rootHash, timestampMs, events?, delegation?}` (the fields a receiver needs that only
 *   members may read);
 * - over the sync stream (Noise-encrypted, to an authenticated member): the same record in clear.
 *
 * Either way `id = SHA-256(parents ‖ artifact)` is re-derived by the receiver, and `signature` is the
 * origin node's Ed25519 over `deltaDigest` (context, id, origin, author, hlc), so a relayed delta is
 * as authentic as one received from its origin.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../governance/index.ts';
import type { DeltaRecord } from '../contexts/index.ts';
import { batches } from '../network/index.ts';
import { parseStamp } from './hlc.ts';

/** Largest artifact a delta may carry between nodes (its hex fits one 8 MiB stream frame). */
export const MAX_ARTIFACT_BYTES = 3 * 1024 * 1024;
/** DAG heads on the wire. */
export const MAX_HEADS = 256;
/**
 * JSON bytes packed into one backfill or snapshot frame (a record larger than this goes alone).
 * Small, so a transfer over a relay that cuts a circuit past its data limit keeps most of what it
 * received (whole frames) and pulls the rest in the next batch (issue #24; docs/sync.md).
 */
export const FRAME_BUDGET = 64 * 1024;

export const KINDS = {
  heads: 'ContextHeadsRequest',
  backfill: 'ContextBackfillRequest',
  snapshot: 'ContextSnapshotRequest',
} as const;

const HEX64 = /^[0-9a-f]{64}$/;
const HEX = /^(?:[0-9a-f]{2})*$/;
export const isHex64 = (v: unknown): v is string => typeof v === 'string' && HEX64.test(v);

/** What the origin signs: the delta's identity (its id covers parents and artifact) and its authorship. */
export function deltaDigest(d: Pick<DeltaRecord, 'contextId' | 'id' | 'author' | 'hlc' | 'origin'>): Buffer {
  return createHash('sha256')
    .update('hearth.delta.v1')
    .update(canonicalJson({ contextId: d.contextId, id: d.id, origin: d.origin ?? null, author: d.author, hlc: d.hlc ?? null }))
    .digest();
}

export function parseIds(v: unknown, max = MAX_HEADS): string[] | undefined {
  if (!Array.isArray(v) || v.length > max || !v.every(isHex64)) return undefined;
  return new Set(v).size === v.length ? [...v] : undefined;
}

function parseEvents(v: unknown): DeltaRecord['events'] | string {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length > 100) return 'events must be a list of at most 100';
  const out: NonNullable<DeltaRecord['events']> = [];
  for (const e of v) {
    const o = e as Record<string, unknown> | null;
    if (!o || typeof o.kind !== 'string' || o.kind.length > 256 || typeof o.data !== 'string' || !HEX.test(o.data) || o.data.length > 32 * 1024) return 'malformed event';
    if (o.handler !== null && typeof o.handler !== 'string') return 'malformed event handler';
    out.push({ kind: o.kind, data: o.data, handler: o.handler as string | null });
  }
  return out;
}

/** The fields only members may read (the sealed part of a gossiped delta; in clear on the stream). */
export interface DeltaBody {
  artifact: string;
  rootHash: string;
  timestampMs: number;
  events?: DeltaRecord['events'];
  delegation?: DeltaRecord['delegation'];
}

export function parseBody(raw: unknown): DeltaBody | string {
  const o = raw as Record<string, unknown> | null;
  if (!o || typeof o !== 'object' || Array.isArray(o)) return 'delta body is not an object';
  if (typeof o.artifact !== 'string' || !HEX.test(o.artifact) || o.artifact.length > 2 * MAX_ARTIFACT_BYTES) return `artifact must be hex of at most ${MAX_ARTIFACT_BYTES} bytes`;
  if (!isHex64(o.rootHash)) return 'rootHash must be 64 hex';
  if (!Number.isSafeInteger(o.timestampMs)) return 'timestampMs must be unix milliseconds';
  const events = parseEvents(o.events);
  if (typeof events === 'string') return events;
  let delegation: DeltaRecord['delegation'];
  if (o.delegation !== undefined) {
    const g = o.delegation as Record<string, unknown> | null;
    if (!g || typeof g.warrant !== 'string' || !HEX.test(g.warrant) || g.warrant.length > 64 * 1024 || !isHex64(g.executorKey)) return 'malformed delegation';
    delegation = { warrant: g.warrant, executorKey: g.executorKey };
  }
  return { artifact: o.artifact, rootHash: o.rootHash, timestampMs: o.timestampMs as number, ...(events ? { events } : {}), ...(delegation ? { delegation } : {}) };
}

/** The envelope fields every delta carries in clear. */
export interface DeltaHead {
  contextId: string;
  id: string;
  parents: string[];
  origin: string;
  author: string;
  hlc: string;
  signature: string;
}

export function parseHead(o: Record<string, unknown>): DeltaHead | string {
  for (const k of ['contextId', 'id', 'origin', 'author'] as const) if (!isHex64(o[k])) return `${k} must be 64 hex`;
  const parents = parseIds(o.parents, 64);
  if (!parents || parents.length === 0) return 'parents must be 1 to 64 distinct ids';
  if (!parseStamp(o.hlc)) return 'hlc must be a stamp (<ms>.<counter>)';
  if (typeof o.signature !== 'string' || !/^[0-9a-f]{128}$/.test(o.signature)) return 'signature must be 64 bytes of hex';
  return { contextId: o.contextId as string, id: o.id as string, parents, origin: o.origin as string, author: o.author as string, hlc: o.hlc as string, signature: o.signature };
}

/** A delta record from the sync stream (head and body in clear). */
export function parseRecord(raw: unknown): DeltaRecord | string {
  const o = raw as Record<string, unknown> | null;
  if (!o || typeof o !== 'object' || Array.isArray(o)) return 'delta is not an object';
  const head = parseHead(o);
  if (typeof head === 'string') return head;
  const body = parseBody(o);
  if (typeof body === 'string') return body;
  return toRecord(head, body);
}

export const toRecord = (h: DeltaHead, b: DeltaBody): DeltaRecord => ({
  id: h.id,
  contextId: h.contextId,
  parents: h.parents,
  artifact: b.artifact,
  rootHash: b.rootHash,
  author: h.author,
  origin: h.origin,
  hlc: h.hlc,
  signature: h.signature,
  timestampMs: b.timestampMs,
  ...(b.events ? { events: b.events } : {}),
  ...(b.delegation ? { delegation: b.delegation } : {}),
});

/** A delta record as it goes on the stream. */
export const recordWire = (d: DeltaRecord): Record<string, unknown> => ({
  contextId: d.contextId,
  id: d.id,
  parents: d.parents,
  origin: d.origin,
  author: d.author,
  hlc: d.hlc,
  signature: d.signature,
  artifact: d.artifact,
  rootHash: d.rootHash,
  timestampMs: d.timestampMs,
  ...(d.events ? { events: d.events } : {}),
  ...(d.delegation ? { delegation: d.delegation } : {}),
});

/** Packs records into frames of at most FRAME_BUDGET bytes of JSON. */
export function* deltaFrames(contextId: string, deltas: readonly DeltaRecord[]): Generator<{ contextId: string; deltas: Record<string, unknown>[] }> {
  for (const batch of batches(deltas.map(recordWire), FRAME_BUDGET)) yield { contextId, deltas: batch };
}
