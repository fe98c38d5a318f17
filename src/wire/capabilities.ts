/**
 * Capability bits and the TEE admission policy's shapes (admin-wire-b §6.1, §6.4; domain.md §4.3).
 * Imports nothing: see ./index.ts.
 */

/** Capability bits (admin-wire-b §6.1); bits not named here are kept as they are. */
export const CAPABILITIES = {
  CAN_CREATE_CONTEXT: 1 << 0,
  CAN_INVITE_MEMBERS: 1 << 1,
  CAN_JOIN_OPEN_SUBGROUPS: 1 << 2,
  MANAGE_MEMBERS: 1 << 3,
  MANAGE_APPLICATION: 1 << 4,
  CAN_CREATE_SUBGROUP: 1 << 5,
  CAN_DELETE_SUBGROUP: 1 << 6,
  CAN_MANAGE_VISIBILITY: 1 << 7,
  CAN_MANAGE_METADATA: 1 << 8,
  CAN_AUTHOR_ON_BEHALF: 1 << 9,
} as const;
export type CapabilityName = keyof typeof CAPABILITIES;

export type TeeMode = 'replica' | 'relay';

export interface SignedReleasePolicy {
  allowedProfiles: string[];
  minReleaseVersion?: string;
}

/** The stored TEE admission policy (both forms, admin-wire-b §6.4), in the GET's field order. */
export interface TeeAdmissionLists {
  allowedMrtd: string[];
  allowedRtmr0: string[];
  allowedRtmr1: string[];
  allowedRtmr2: string[];
  allowedRtmr3: string[];
  allowedTcbStatuses: string[];
  acceptMock: boolean;
  signedRelease?: SignedReleasePolicy;
  mode: TeeMode;
}
