/**
 * The blob protocol between peers, `/calimero/blob/0.0.2` (domain.md §5.2), inside the network's
 * own framing (docs/network.md "Frame format"): the request is one JSON frame `{blob_id,
 * context_id}`; the answer is a JSON frame `{found, size?}`, then, when found, the blob's stored
 * chunks as raw frames (each at most 1 MiB), then the network's END. Ids are 64 lowercase hex
 * (base58 accepted, as everywhere on hearth). The reference's `auth` field is not needed: the
 * network authenticates the requesting node's key on every connection (Noise), and the provider
 * checks that key's membership itself. docs/blobs.md "Blobs between peers".
 */
import { parseId } from '../crypto/ids.ts';
import { CHUNK_SIZE, DEFAULT_MAX_BLOB_BYTES } from './store.ts';

export const BLOB_PROTOCOL = '/calimero/blob/0.0.2';

/** domain.md §5.2: the requester allows 60 s for a whole transfer ... */
export const FETCH_TIMEOUT_MS = 60_000;
/** ... and 30 s between two frames */
export const CHUNK_TIMEOUT_MS = 30_000;
/** domain.md §5.2: the provider allows 300 s */
export const SERVE_TIMEOUT_MS = 300_000;
/** a request is two ids (and the reference's optional `auth`, ignored): far below this */
export const MAX_REQUEST_BYTES = 4096;
/** the largest frame a provider sends: one stored chunk */
export const MAX_CHUNK_FRAME_BYTES = CHUNK_SIZE;

export interface BlobRequest {
  blobId: string;
  contextId: string;
}

export interface BlobAnswer {
  found: boolean;
  /** bytes; a provider that holds the blob always sends it */
  size?: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });

function jsonObject(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(dec.decode(bytes));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export const encodeRequest = (r: BlobRequest): Uint8Array => enc.encode(JSON.stringify({ blob_id: r.blobId, context_id: r.contextId }));

/** The request, or the reason it is malformed. */
export function parseRequest(bytes: Uint8Array): BlobRequest | string {
  const o = jsonObject(bytes);
  if (!o) return 'the request is not a JSON object';
  const blobId = typeof o.blob_id === 'string' ? parseId(o.blob_id) : undefined;
  if (!blobId) return 'blob_id is not a 32-byte id';
  const contextId = typeof o.context_id === 'string' ? parseId(o.context_id) : undefined;
  if (!contextId) return 'context_id is not a 32-byte id';
  return { blobId, contextId };
}

export const encodeAnswer = (a: BlobAnswer): Uint8Array => enc.encode(JSON.stringify(a.found ? { found: true, size: a.size } : { found: false }));

/** The provider's first answer, or the reason it is malformed (a size past the blob bound is one). */
export function parseAnswer(bytes: Uint8Array, maxBytes = DEFAULT_MAX_BLOB_BYTES): BlobAnswer | string {
  const o = jsonObject(bytes);
  if (!o || typeof o.found !== 'boolean') return 'the answer is not {found, size?}';
  if (!o.found) return { found: false };
  if (o.size === undefined || o.size === null) return { found: true };
  if (typeof o.size !== 'number' || !Number.isSafeInteger(o.size) || o.size < 0) return 'size is not a byte count';
  if (o.size > maxBytes) return `size ${o.size} exceeds the blob bound of ${maxBytes} bytes`;
  return { found: true, size: o.size };
}
