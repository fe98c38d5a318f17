/**
 * @module client/accounts
 *
 * Account and devices routes (admin spec "Account and devices"; admin-wire-b §3). `devices()` and
 * `applications()` are flat bodies on the wire; every other answer is a `{data}` envelope.
 */

import type { CallOptions, HttpClient } from './http.ts';
import type { NodeIdentityView } from '../wire/accounts.ts';

export interface AccountDevice {
  deviceId: string;
  signingKey: string;
  isSelf: boolean;
  revoked: boolean;
  /** applications the device may speak for; empty = every application */
  applications: string[];
  /** namespaces holding a live binding for the device */
  namespaces: string[];
  /** omitted while unnamed */
  label?: string;
  labelEpoch: number;
}

export interface AccountApplication {
  applicationId: string;
  namespaces: string[];
}

export interface PairInitResult {
  accountId: string;
  deviceId: string;
  kemPublicKey: string;
  signPublicKey: string;
  /** 72 bytes as 144 hex; opaque */
  statement: string;
  confirmationCode: string;
}

export interface PairCompleteRequest {
  deviceId: string;
  kemPublicKey: string;
  signPublicKey: string;
  statement: string;
  confirmationCode: string;
  /** absent/empty = every application */
  applications?: string[];
}

export interface PairCompleteResult {
  accountId: string;
  deviceId: string;
  keyDelivered: boolean;
  confirmationCode: string;
  credential: string;
}

export type DeviceScope = 'all' | { only: string[] };
export type LinkSkipReason = 'outOfScope' | 'alreadyBound' | 'noScopeKey' | 'revoked' | 'ownDevice' | 'failed';

export interface RelinkResult {
  accountId: string;
  deviceId: string;
  applications: string[];
  linkedIn: { namespaceId: string; keyDelivered: boolean }[];
  skipped: { namespaceId: string; reason: LinkSkipReason }[];
}

export interface RescopeResult extends RelinkResult {
  descoped: { namespaceId: string; keyRotated: boolean }[];
}

export interface LabelResult {
  accountId: string;
  deviceId: string;
  label: string;
  labelEpoch: number;
}

export type RootSignDomain = 'mdma.account-link' | 'mdma.account-login' | 'mdma.account-recovery';

export interface SignWithRootResult {
  rootPublicKey: string;
  /** base64 of the 64-byte Ed25519 signature */
  signature: string;
  accountId: string;
}

/** NodeIdentity (admin spec "NodeIdentity"): which account this node acts as, and its keys. */
export interface NodeIdentity extends NodeIdentityView {
  /** present once another device of the account revoked this node's device */
  revokedFrom?: { accountId: string; deviceId: string };
}

const device = (id: string) => `/admin-api/account/devices/${encodeURIComponent(id)}`;

export class AccountsApi {
  constructor(private readonly http: HttpClient) {}

  /** `GET /identity`: the account this node acts as (the caller of the admin API acts as it too). */
  identity(options?: CallOptions): Promise<NodeIdentity> {
    return this.http.data('/admin-api/identity', options);
  }

  /** `GET /account/devices` (flat `{devices}`). */
  async devices(options?: CallOptions): Promise<AccountDevice[]> {
    return (await this.http.json<{ devices: AccountDevice[] }>('/admin-api/account/devices', options)).devices;
  }

  /** `GET /account/applications` (flat `{applications}`). */
  async applications(options?: CallOptions): Promise<AccountApplication[]> {
    return (await this.http.json<{ applications: AccountApplication[] }>('/admin-api/account/applications', options)).applications;
  }

  /** Run on the new device's node. */
  pairInit(body: { accountRootPublicKey: string; namespaces?: string[]; accountNamespace?: string }, options?: CallOptions): Promise<PairInitResult> {
    return this.http.data('/admin-api/account/pair-init', { ...options, method: 'POST', body });
  }

  /** Run on the node holding the account root. */
  pairComplete(body: PairCompleteRequest, options?: CallOptions): Promise<PairCompleteResult> {
    return this.http.data('/admin-api/account/pair-complete', { ...options, method: 'POST', body });
  }

  /** Add-only; an empty list widens the scope to every application. */
  relink(deviceId: string, applications: string[] = [], options?: CallOptions): Promise<RelinkResult> {
    return this.http.data(`${device(deviceId)}/relink`, { ...options, method: 'POST', body: { applications } });
  }

  /** Replaces the device's scope (`{only: []}` is refused with 400). */
  setScope(deviceId: string, scope: DeviceScope, options?: CallOptions): Promise<RescopeResult> {
    return this.http.data(`${device(deviceId)}/scope`, { ...options, method: 'PUT', body: { scope } });
  }

  setLabel(deviceId: string, label: string, options?: CallOptions): Promise<LabelResult> {
    return this.http.data(`${device(deviceId)}/label`, { ...options, method: 'PUT', body: { label } });
  }

  /** Signs a challenge with the account root; `text` is the hex-encoded challenge. */
  signWithRoot(body: { domain: RootSignDomain | string; text: string }, options?: CallOptions): Promise<SignWithRootResult> {
    return this.http.data('/admin-api/account/sign-with-root', { ...options, method: 'POST', body });
  }
}
