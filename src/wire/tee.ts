/** `POST /admin-api/tee/attest`'s body (admin-wire-b §9.3). Imports nothing: see ./index.ts. */
export interface TeeAttestRequest {
  /** 32 bytes as 64 hex */
  nonce: string;
  applicationId?: string;
  bindNodeKey?: boolean;
  bindTransportKey?: boolean;
  includeCollateral?: boolean;
}
