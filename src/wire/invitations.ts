/**
 * The signed group invitation (admin-wire-b §2.7; domain.md §4.5): the reference's snake_case
 * `SignedGroupOpenInvitation`, 32-byte values as arrays of 32 integers, `admitters` as hex. Its
 * `invitation` body is signed: pass it through verbatim. Imports nothing: see ./index.ts.
 */

export interface InvitationBody {
  inviter_identity: number[];
  group_id: number[];
  /** absolute unix seconds */
  expiration_timestamp: number;
  secret_salt: number[];
  /** 0 Admin, 1 Member, 2 ReadOnly */
  invited_role: number;
  admitters: string[];
}

export interface SignedGroupOpenInvitation {
  invitation: InvitationBody;
  inviter_signature: string;
  inviter_account?: string;
  admitter_addrs?: string[];
  application_id?: number[];
  app_key?: number[];
}
