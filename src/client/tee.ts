/**
 * @module client/tee
 *
 * TEE routes (admin spec "TEE and network"; admin-wire-b §9). `info` and `attest` are public on the
 * node (no token needed); `registrationAttest` is guarded. A node without a TEE answers `info` and
 * both attestations with 501 ({@link HttpError} `status === 501`, the message naming why). Quotes are verified by the caller; the node never judges them.
 */

import type { CallOptions, HttpClient } from './http.ts';
import type { TeeAttestRequest } from '../wire/tee.ts';

export interface TeeInfo {
  /** `gcp`, … or `unknown` */
  cloudProvider: string;
  osImage: string;
  /** launch measurement, hex */
  mrtd: string;
}

/** The attest body (src/wire/tee.ts). */
export type { TeeAttestRequest };

export interface TeeAttestResult {
  quoteB64: string;
  quote?: Record<string, unknown>;
  boundPublicKey?: string;
  transportPublicKey?: string;
  collateral?: Record<string, unknown>;
}

export class TeeApi {
  constructor(private readonly http: HttpClient) {}

  /** `GET /admin-api/tee/info`. */
  info(options?: CallOptions): Promise<TeeInfo> {
    return this.http.data('/admin-api/tee/info', options);
  }

  /** `POST /admin-api/tee/attest`: a quote whose report data starts with `nonce`. */
  attest(body: TeeAttestRequest, options?: CallOptions): Promise<TeeAttestResult> {
    return this.http.data('/admin-api/tee/attest', { ...options, method: 'POST', body });
  }

  /** `POST /admin-api/tee/registration-attest`: a quote binding `nonce` to this node's registration. */
  registrationAttest(body: { nonce: string }, options?: CallOptions): Promise<TeeAttestResult> {
    return this.http.data('/admin-api/tee/registration-attest', { ...options, method: 'POST', body });
  }
}
