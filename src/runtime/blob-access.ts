/**
 * What the `blob_*` host functions need from the node (runtime.md §2 "blob_*: file-descriptor style
 * streaming I/O"), and its adapter over the node's {@link BlobService}. Reading streams the stored
 * blob; writing stores the bytes a guest closed as one blob (content-addressed, so a call that later
 * fails leaves at most an unreferenced blob, as in the reference whose writer task stores it too).
 */
import type { BlobService } from '../blobs/index.ts';
import { toHex as hex } from '../crypto/ids.ts';
import { HearthError } from '../errors.ts';

export interface RuntimeBlobs {
  /** the blob's bytes, or null when not available (with `contextId`: the context's peers are asked too) */
  open(blobId: Uint8Array, contextId?: Uint8Array): Promise<AsyncIterable<Uint8Array> | null>;
  has(blobId: Uint8Array): Promise<boolean>;
  /** stores the bytes; the 32-byte blob id */
  put(bytes: Uint8Array): Promise<Uint8Array>;
}

export function blobAccess(service: BlobService): RuntimeBlobs {
  const missing = (e: unknown) => e instanceof HearthError && e.kind === 'not_found';
  return {
    async open(blobId, contextId) {
      try {
        const { body } = await service.open(hex(blobId), contextId ? hex(contextId) : undefined);
        return body;
      } catch (e) {
        if (missing(e)) return null;
        throw e;
      }
    },
    async has(blobId) {
      try {
        await service.info(hex(blobId));
        return true;
      } catch (e) {
        if (missing(e)) return false;
        throw e;
      }
    },
    async put(bytes) {
      const r = await service.upload((async function* () {
        yield bytes;
      })());
      return Buffer.from(r.blobId, 'hex');
    },
  };
}
