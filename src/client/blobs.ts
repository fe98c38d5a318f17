/**
 * @module client/blobs
 *
 * The `/admin-api/blobs` client (admin spec "Blobs"; admin-wire-a §5).
 *
 * Shapes: `upload`, `list` and `delete` return the node's snake_case bodies as
 * sent (`{blob_id, size}`, `{blob_id, deleted}`); `head` returns the spec's
 * "Blob information" (`{blobId, size?, hash?, mimeType?, source}`) read from the
 * response headers. Ids are 64 lowercase hex.
 *
 * Deadlines: blob calls default to no deadline for transfers of local blobs
 * (a 1 GiB upload takes longer than the client's 10 s default) and to 45 s
 * when `contextId` is given (the node sweeps peers for up to 30 s). Pass
 * `timeoutMs` to override.
 *
 * Progress: `upload` reports bytes sent for a `ReadableStream` as they are
 * pulled, and for `Uint8Array`/`Blob` bodies (sent whole, so browsers need no
 * streaming-upload support) at the start, as the browser sends them (through
 * XMLHttpRequest, see `xhr.ts`; in Node only at the start) and when the node answered.
 * `download` reports bytes as the returned stream is read, with the total from
 * `Content-Length`.
 */

import type { CallOptions, HttpClient } from './http.ts';
import type { BlobInfo } from '../wire/blobs.ts';

/** The node answers a peer sweep within 30 s; leave room for the transfer to start. */
export const PEER_LOOKUP_TIMEOUT_MS = 45_000;

export interface BlobEntry {
  blob_id: string;
  size: number;
}

export interface DeletedBlob {
  blob_id: string;
  deleted: boolean;
}

/** Admin spec "Blob information", from the HEAD answer's headers (src/wire/blobs.ts). */
export type { BlobInfo };

/** `(bytes done, total bytes or undefined when unknown)` */
export type ProgressFn = (loaded: number, total: number | undefined) => void;

export interface UploadOptions extends CallOptions {
  /** expected SHA-256 of the whole content (64 hex); the node rejects a mismatch with 400 */
  hash?: string;
  /** announce the blob to this context's peers */
  contextId?: string;
  onProgress?: ProgressFn;
}

export interface LookupOptions extends CallOptions {
  /** search this context's peers when the node does not hold the blob */
  contextId?: string;
}

export interface DownloadOptions extends LookupOptions {
  onProgress?: ProgressFn;
}

const path = (id: string) => `/admin-api/blobs/${encodeURIComponent(id)}`;

export class BlobsApi {
  constructor(private readonly http: HttpClient) {}

  /** `PUT /admin-api/blobs` with the raw bytes → `{blob_id, size}`. */
  async upload(data: Uint8Array | ReadableStream<Uint8Array> | Blob, options: UploadOptions = {}): Promise<BlobEntry> {
    const { hash, contextId, onProgress, ...call } = options;
    let body: BodyInit;
    let total: number | undefined;
    if (typeof ReadableStream !== 'undefined' && data instanceof ReadableStream) {
      body = onProgress ? data.pipeThrough(counter(onProgress, undefined)) : data;
    } else {
      total = data instanceof Uint8Array ? data.byteLength : (data as Blob).size;
      body = data as BodyInit;
      onProgress?.(0, total);
    }
    const result = await this.http.data<BlobEntry>('/admin-api/blobs', {
      ...call,
      timeoutMs: call.timeoutMs ?? this.defaultTimeout(contextId),
      method: 'PUT',
      query: { hash, context_id: contextId },
      headers: { 'content-type': 'application/octet-stream', ...call.headers },
      rawBody: body,
      // a whole body in a browser: real progress through XMLHttpRequest
      ...(onProgress && total !== undefined ? { onUploadProgress: (loaded: number) => onProgress(Math.min(loaded, total), total) } : {}),
    });
    if (total !== undefined) onProgress?.(total, total);
    return result;
  }

  /** `GET /admin-api/blobs/{id}` → the content as a stream (read it, or cancel it). */
  async download(id: string, options: DownloadOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const { contextId, onProgress, ...call } = options;
    // stream(): the deadline covers the wait for headers only, not the transfer
    const res = await this.http.stream(path(id), {
      ...call,
      timeoutMs: call.timeoutMs ?? (contextId ? PEER_LOOKUP_TIMEOUT_MS : undefined),
      query: { context_id: contextId },
    });
    const body = res.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
    if (!onProgress) return body;
    const length = res.headers.get('content-length');
    return body.pipeThrough(counter(onProgress, length === null ? undefined : Number(length)));
  }

  /** The whole content in memory (small blobs). */
  async bytes(id: string, options: DownloadOptions = {}): Promise<Uint8Array> {
    const stream = await this.download(id, options);
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  /** `HEAD /admin-api/blobs/{id}` → "Blob information"; a missing blob throws HttpError 404. */
  async head(id: string, options: LookupOptions = {}): Promise<BlobInfo> {
    const { contextId, ...call } = options;
    const res = await this.http.send(path(id), {
      ...call,
      timeoutMs: call.timeoutMs ?? (contextId ? PEER_LOOKUP_TIMEOUT_MS : undefined),
      method: 'HEAD',
      query: { context_id: contextId },
    });
    const h = res.headers;
    const length = h.get('content-length');
    return {
      blobId: h.get('x-blob-id') ?? id,
      ...(length !== null ? { size: Number(length) } : {}),
      ...(h.get('x-blob-hash') ? { hash: h.get('x-blob-hash')! } : {}),
      ...(h.get('x-blob-mime-type') ? { mimeType: h.get('x-blob-mime-type')! } : {}),
      source: h.get('x-blob-source') === 'peer' ? 'peer' : 'local',
    };
  }

  /** `GET /admin-api/blobs` → every root blob the node holds. */
  async list(options?: CallOptions): Promise<BlobEntry[]> {
    return (await this.http.data<{ blobs: BlobEntry[] }>('/admin-api/blobs', options)).blobs;
  }

  /** `DELETE /admin-api/blobs/{id}` → flat `{blob_id, deleted}` (drops one reference). */
  delete(id: string, options?: CallOptions): Promise<DeletedBlob> {
    return this.http.json<DeletedBlob>(path(id), { ...options, method: 'DELETE' });
  }

  private defaultTimeout(contextId: string | undefined): number {
    return contextId ? PEER_LOOKUP_TIMEOUT_MS : 0;
  }
}

function counter(onProgress: ProgressFn, total: number | undefined): TransformStream<Uint8Array, Uint8Array> {
  let loaded = 0;
  return new TransformStream({
    transform(chunk, controller) {
      loaded += chunk.byteLength;
      onProgress(loaded, total);
      controller.enqueue(chunk);
    },
  });
}
