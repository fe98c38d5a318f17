/**
 * @module client/settings
 *
 * Capabilities, settings and metadata of groups (admin spec "Capabilities, settings and
 * metadata"; admin-wire-b §6). Decoding follows the wire exactly: capabilities and metadata are
 * `{data: …}` envelopes (metadata getters resolve `null` when none is set), the TEE admission
 * policy GET is flat (an enveloped answer is accepted too, as the reference SDK does), and every
 * write answers an empty 2xx ("none"). Non-2xx answers throw {@link HttpError}: 400 invalid value or
 * proof, 403 naming the missing role/capability or root proof, 404 unknown group/member/context,
 * 409 stale `ownerOpCounter` or an inherited-only member.
 */

import type { CallOptions, HttpClient } from './http.ts';
import { CAPABILITIES, type SignedReleasePolicy, type TeeAdmissionLists, type TeeMode } from '../wire/capabilities.ts';

/** Capability bits (admin-wire-b §6.1; the node's own table, src/wire/capabilities.ts); undefined bits are kept as they are. */
export { CAPABILITIES };

export type SubgroupVisibility = 'open' | 'restricted';
export type { TeeMode, SignedReleasePolicy };

export interface MetadataRecord {
  name: string | null;
  data: Record<string, string>;
  /** wall-clock milliseconds */
  updatedAt: number | bigint;
  updatedBy: string;
}

export interface SetMetadataRequest {
  /** absent keeps the stored name; an empty string is refused */
  name?: string;
  /** replaces the stored map; absent = `{}` */
  data?: Record<string, string>;
}

/** SetTeeAdmissionPolicyRequest: the measurements form, or `signedRelease` with every measurement list empty. */
export interface SetTeeAdmissionPolicyRequest {
  allowedMrtd?: string[];
  allowedRtmr0?: string[];
  allowedRtmr1?: string[];
  allowedRtmr2?: string[];
  allowedRtmr3?: string[];
  allowedTcbStatuses?: string[];
  acceptMock?: boolean;
  signedRelease?: SignedReleasePolicy;
  mode?: TeeMode;
  /** hex SignedOwnerOp; omit it to let a node holding your root sign */
  rootProof?: string;
}

/** The TEE admission policy GET: `enabled`, then the stored lists (src/wire/capabilities.ts). */
export interface TeeAdmissionPolicy extends TeeAdmissionLists {
  enabled: boolean;
}

const seg = encodeURIComponent;

export class SettingsApi {
  constructor(private readonly http: HttpClient) {}

  private async none(path: string, method: 'PUT' | 'DELETE', body: unknown, options?: CallOptions): Promise<void> {
    await this.http.send(path, { ...options, method, ...(body === undefined ? {} : { body }) });
  }

  /** `GET /groups/{g}/members/{account}/capabilities` → the member's mask. */
  async memberCapabilities(groupId: string, account: string, options?: CallOptions): Promise<number> {
    const d = await this.http.data<{ capabilities: number }>(`/admin-api/groups/${seg(groupId)}/members/${seg(account)}/capabilities`, options);
    return Number(d.capabilities);
  }

  /** `PUT /groups/{g}/members/{account}/capabilities` with the whole mask (admins only). */
  setMemberCapabilities(groupId: string, account: string, capabilities: number, options?: CallOptions): Promise<void> {
    return this.none(`/admin-api/groups/${seg(groupId)}/members/${seg(account)}/capabilities`, 'PUT', { capabilities }, options);
  }

  /** Read-modify-write that sets `bits` on one member's mask and keeps every other bit. */
  async grantMemberCapabilities(groupId: string, account: string, bits: number, options?: CallOptions): Promise<number> {
    const next = ((await this.memberCapabilities(groupId, account, options)) | bits) >>> 0;
    await this.setMemberCapabilities(groupId, account, next, options);
    return next;
  }

  /** `PUT /groups/{g}/settings/default-capabilities` (admins only); read it back from GroupInfo. */
  setDefaultCapabilities(groupId: string, defaultCapabilities: number, options?: CallOptions): Promise<void> {
    return this.none(`/admin-api/groups/${seg(groupId)}/settings/default-capabilities`, 'PUT', { defaultCapabilities }, options);
  }

  /** Read-modify-write of the group default mask (read from GroupInfo), keeping every other bit. */
  async grantDefaultCapabilities(groupId: string, bits: number, options?: CallOptions): Promise<number> {
    const info = await this.http.data<{ defaultCapabilities: number }>(`/admin-api/groups/${seg(groupId)}`, options);
    const next = (Number(info.defaultCapabilities) | bits) >>> 0;
    await this.setDefaultCapabilities(groupId, next, options);
    return next;
  }

  /** `PUT /groups/{g}/settings/subgroup-visibility` (admin or CAN_MANAGE_VISIBILITY). */
  setSubgroupVisibility(groupId: string, subgroupVisibility: SubgroupVisibility, options?: CallOptions): Promise<void> {
    return this.none(`/admin-api/groups/${seg(groupId)}/settings/subgroup-visibility`, 'PUT', { subgroupVisibility }, options);
  }

  /** `GET /groups/{ns}/settings/tee-admission-policy` (flat; an enveloped answer is unwrapped). */
  async teeAdmissionPolicy(groupId: string, options?: CallOptions): Promise<TeeAdmissionPolicy> {
    const body = await this.http.json<Record<string, unknown>>(`/admin-api/groups/${seg(groupId)}/settings/tee-admission-policy`, options);
    const inner = body && typeof body === 'object' && !('enabled' in body) && body.data && typeof body.data === 'object' ? body.data : body;
    return inner as unknown as TeeAdmissionPolicy;
  }

  /** `PUT /groups/{ns}/settings/tee-admission-policy`; root-guarded, namespace root only. */
  setTeeAdmissionPolicy(groupId: string, request: SetTeeAdmissionPolicyRequest, options?: CallOptions): Promise<void> {
    return this.none(`/admin-api/groups/${seg(groupId)}/settings/tee-admission-policy`, 'PUT', request, options);
  }

  /** `PUT /groups/{ns}/settings/tee-authoring-policy`; an empty list switches authorship off. */
  setTeeAuthoringPolicy(groupId: string, request: { allowedMrtd: string[]; rootProof?: string }, options?: CallOptions): Promise<void> {
    return this.none(`/admin-api/groups/${seg(groupId)}/settings/tee-authoring-policy`, 'PUT', request, options);
  }

  /** `DELETE /groups/{ns}/settings/tee-authoring-policy`, with no body unless a proof is given. */
  disableTeeAuthoringPolicy(groupId: string, rootProof?: string, options?: CallOptions): Promise<void> {
    return this.none(`/admin-api/groups/${seg(groupId)}/settings/tee-authoring-policy`, 'DELETE', rootProof === undefined ? undefined : { rootProof }, options);
  }

  groupMetadata(groupId: string, options?: CallOptions): Promise<MetadataRecord | null> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/metadata`, { ...options, nullable: true });
  }

  setGroupMetadata(groupId: string, request: SetMetadataRequest, options?: CallOptions): Promise<void> {
    return this.none(`/admin-api/groups/${seg(groupId)}/metadata`, 'PUT', request, options);
  }

  memberMetadata(groupId: string, account: string, options?: CallOptions): Promise<MetadataRecord | null> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/members/${seg(account)}/metadata`, { ...options, nullable: true });
  }

  setMemberMetadata(groupId: string, account: string, request: SetMetadataRequest, options?: CallOptions): Promise<void> {
    return this.none(`/admin-api/groups/${seg(groupId)}/members/${seg(account)}/metadata`, 'PUT', request, options);
  }

  contextMetadata(groupId: string, contextId: string, options?: CallOptions): Promise<MetadataRecord | null> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/contexts/${seg(contextId)}/metadata`, { ...options, nullable: true });
  }

  setContextMetadata(groupId: string, contextId: string, request: SetMetadataRequest, options?: CallOptions): Promise<void> {
    return this.none(`/admin-api/groups/${seg(groupId)}/contexts/${seg(contextId)}/metadata`, 'PUT', request, options);
  }
}
