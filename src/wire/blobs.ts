/** Admin spec "Blob information" (the HEAD answer's headers). Imports nothing: see ./index.ts. */
export interface BlobInfo {
  blobId: string;
  /** absent when a peer-held blob's size is unknown */
  size?: number;
  hash?: string;
  mimeType?: string;
  /** `X-Blob-Source`; the SDK reads `local` when an older node does not send it */
  source: 'local' | 'peer';
}
