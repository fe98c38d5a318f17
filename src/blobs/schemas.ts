/**
 * Request and response schemas of the blob routes (admin spec "Blobs"; admin-wire-a §5). Bodies are
 * snake_case on the wire; ids are 64 lowercase hex (base58 accepted on input). The upload body is a
 * raw stream the route reads itself, so it is documented, not validated; downloads are the bytes
 * with the blob's sniffed MIME type, and HEAD answers the same headers without a body.
 */
import { Type } from 'typebox';
import { Data, Hex32 } from '../http/response-schemas.ts';

const IdText = Type.String({ description: 'blob id: 64 hex characters (base58 of 32 bytes accepted)' });
const ContextIdText = Type.Optional(
  Type.String({ description: 'context whose peers are asked (30 s deadline) when this node does not hold the blob' }),
);

export const IdParams = Type.Object({ id: IdText });
export const LookupQuery = Type.Object({ context_id: ContextIdText });
export const UploadQuery = Type.Object({
  hash: Type.Optional(Type.String({ description: 'expected SHA-256 of the content (64 hex); a mismatch is 400' })),
  context_id: Type.Optional(Type.String({ description: 'context to announce the blob to' })),
});

/** Documentation only (`config.docs.body`): the bytes, streamed to disk as they arrive. */
export const UploadBody = {
  content: { 'application/octet-stream': { schema: Type.String({ format: 'binary', description: 'the raw content, any length' }) } },
};

const BlobEntry = Type.Object({ blob_id: Hex32('SHA-256 of the content'), size: Type.Integer({ minimum: 0, description: 'bytes' }) });

export const UploadResponse = Data(BlobEntry);
export const ListBlobsResponse = Data(Type.Object({ blobs: Type.Array(BlobEntry) }));
/** Flat, as the reference answers it (reference README "Envelopes"). */
export const DeleteBlobResponse = Type.Object({
  blob_id: Hex32(),
  deleted: Type.Boolean({ description: 'one reference dropped; the bytes go with the last one' }),
});

const header = (description: string) => ({ description, schema: { type: 'string' } });
const BLOB_HEADERS = {
  'X-Blob-ID': header('the blob id (64 hex)'),
  'X-Blob-Source': header('"local", or "peer" when only a peer of context_id holds it'),
  'X-Blob-Hash': header('SHA-256 of the content; absent for a peer blob'),
  'X-Blob-MIME-Type': header('sniffed from the first bytes; absent for a peer blob'),
  ETag: header('"<hash>"'),
  'Content-Length': header('bytes; absent when a peer reported no size'),
};

/** Any sniffed type (image/png, application/wasm, …), `application/octet-stream` when none matched. */
const bytesOf = (schema: ReturnType<typeof Type.String>) => ({ 'application/octet-stream': { schema }, '*/*': { schema } });

export const DownloadResponse = {
  description: "The content, typed with the blob's sniffed MIME type",
  content: bytesOf(Type.String({ format: 'binary' })),
  headers: BLOB_HEADERS,
};

export const InfoResponse = {
  description: 'Headers only ("Blob information"): the GET answer without its body',
  content: bytesOf(Type.String({ maxLength: 0, description: 'no body' })),
  headers: BLOB_HEADERS,
};
