import { describe, expect, it } from 'vitest';
import { invitationToText, type SignedGroupOpenInvitation } from '../../../src/client/index.ts';
import { decodeInvitation, encodeInvitation } from './invitation.ts';

const invitation: SignedGroupOpenInvitation = {
  invitation: {
    inviter_identity: Array(32).fill(7),
    group_id: Array.from({ length: 32 }, (_, i) => i),
    expiration_timestamp: 1_900_000_000,
    secret_salt: Array(32).fill(255),
    invited_role: 1,
    admitters: ['ab'.repeat(32)],
  },
  inviter_signature: 'cd'.repeat(64),
  admitter_addrs: ['/ip4/127.0.0.1/tcp/2428/p2p/12D3KooW'],
};

describe('invitation strings', () => {
  it('is the SDK’s inv1. line (as the CLI prints it), one line, and reads back to the same object', () => {
    const s = encodeInvitation(invitation);
    expect(s).toMatch(/^inv1\.[A-Za-z0-9_-]+$/);
    expect(s).toBe(invitationToText(invitation));
    expect(decodeInvitation(invitationToText({ invitation, groupName: 'ns' })).invitation).toEqual(invitation);
    const back = decodeInvitation(`  ${s}\n`);
    expect(back.invitation).toEqual(invitation);
    expect(back.namespaceId).toBe(Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, '0')).join(''));
    expect(back.expiresAt).toBe(1_900_000_000);
  });

  it('accepts the raw JSON object, and the bare base64url of the JSON', () => {
    expect(decodeInvitation(JSON.stringify(invitation, null, 2)).invitation).toEqual(invitation);
    expect(decodeInvitation(Buffer.from(JSON.stringify(invitation)).toString('base64url')).invitation).toEqual(invitation);
  });

  it('says what is wrong with what was pasted', () => {
    expect(() => decodeInvitation('')).toThrow(/paste an invitation/);
    expect(() => decodeInvitation('{"invitation": ')).toThrow(/not valid JSON/);
    expect(() => decodeInvitation('hello world!')).toThrow(/not an invitation/);
    expect(() => decodeInvitation('inv1.!!')).toThrow(/damaged/);
    expect(() => decodeInvitation(Buffer.from('[1,2]').toString('base64url'))).toThrow(/no signed `invitation` body/);
    expect(() => decodeInvitation(JSON.stringify({ ...invitation, invitation: { ...invitation.invitation, group_id: [1] } }))).toThrow(/names no namespace/);
  });
});
