/**
 * The `blob_*` host functions (runtime.md §2 "blob_*: file-descriptor style streaming I/O"; core
 * `crates/runtime/src/logic/host_functions/blobs.rs`): fds from 1, at most 100 open handles.
 * Read handles stream the stored blob through the backend; write handles collect chunks in the
 * worker and store them as one blob on `blob_close`. Without blob access every function traps
 * `blob operations not supported (NodeClient not available)`, as the reference without a node client.
 */
import type { GuestMemory } from './guest-memory.ts';
import { compareBytes, type HostFn, type HostState, type SyncBackend } from './host-state.ts';
import type { CallRequestData } from './protocol.ts';
import { HostErrors } from './trap.ts';

export function blobImports(req: CallRequestData, backend: SyncBackend, state: HostState, m: GuestMemory): Record<string, HostFn> {
  const limits = state.limits;
  const { desc, read, readSized, write } = m;
  const requireBlobs = () => {
    if (!backend.hasBlobs) throw HostErrors.blobsNotSupported();
  };
  const newBlobFd = (): bigint => {
    if (state.blobHandles.size >= limits.maxBlobHandles) throw HostErrors.tooManyBlobHandles(limits.maxBlobHandles);
    const fd = state.nextBlobFd;
    state.nextBlobFd += 1n;
    return fd;
  };
  const sameContext = (ctx: Uint8Array) => {
    if (compareBytes(ctx, req.contextId) !== 0) throw HostErrors.blobContextMismatch();
  };

  return {
    blob_create() {
      requireBlobs();
      const fd = newBlobFd();
      state.blobHandles.set(fd, { mode: 'write', chunks: [], size: 0 });
      return fd;
    },
    blob_write(fd, dataPtr) {
      const d = desc(dataPtr);
      requireBlobs();
      if (d.len > limits.maxBlobChunkSize) throw HostErrors.blobWriteTooLarge(d.len, limits.maxBlobChunkSize);
      const h = state.blobHandles.get(fd);
      if (!h || h.mode !== 'write') throw HostErrors.invalidBlobHandle();
      const data = read(d);
      const current = state.blobWriteMemory + data.length;
      if (current > limits.maxBlobWriteMemory) throw HostErrors.totalBlobMemoryExceeded(current, limits.maxBlobWriteMemory);
      state.blobWriteMemory = current;
      h.chunks.push(data);
      h.size += data.length;
      return BigInt(data.length);
    },
    blob_close(fd, idPtr) {
      const d = desc(idPtr);
      if (d.len !== 32) throw HostErrors.invalidMemoryAccess();
      requireBlobs();
      const h = state.blobHandles.get(fd);
      if (!h) throw HostErrors.invalidBlobHandle();
      state.blobHandles.delete(fd);
      let id: Uint8Array;
      if (h.mode === 'write') {
        state.blobWriteMemory -= h.size;
        id = backend.blobPut(Buffer.concat(h.chunks));
      } else id = h.blobId;
      write(d, id);
      return 1;
    },
    blob_open(idPtr) {
      const d = desc(idPtr);
      requireBlobs();
      const blobId = readSized(d, 32);
      const fd = newBlobFd();
      state.blobHandles.set(fd, { mode: 'read', blobId });
      return fd;
    },
    blob_open_in_context(idPtr, ctxPtr) {
      requireBlobs();
      const blobId = readSized(desc(idPtr), 32);
      sameContext(readSized(desc(ctxPtr), 32));
      if (!backend.blobFetch(blobId, req.contextId)) return 0n;
      const fd = newBlobFd();
      state.blobHandles.set(fd, { mode: 'read', blobId });
      return fd;
    },
    blob_read(fd, dstPtr) {
      const d = desc(dstPtr);
      requireBlobs();
      if (d.len > limits.maxBlobChunkSize) throw HostErrors.blobBufferTooLarge(d.len, limits.maxBlobChunkSize);
      if (d.len === 0) return 0n;
      const h = state.blobHandles.get(fd);
      if (!h || h.mode !== 'read') throw HostErrors.invalidBlobHandle();
      const data = backend.blobRead(fd, h.blobId, d.len);
      if (data.length > 0) write(d, data);
      return BigInt(data.length);
    },
    blob_announce_to_context(idPtr, ctxPtr) {
      requireBlobs();
      const blobId = readSized(desc(idPtr), 32);
      sameContext(readSized(desc(ctxPtr), 32));
      // peers find blobs by asking the context (blob discovery); held locally = announceable
      return backend.blobHas(blobId) ? 1 : 0;
    },
  };
}
