import { describe, expect, it } from 'vitest';
import { invitationFromText, invitationToText } from './invitation-text.ts';

const signed = {
  invitation: { inviter_identity: Array(32).fill(171), group_id: Array(32).fill(1), secret_salt: [1, 2], invited_role: 1, admitters: [], expiration_timestamp: 1_800_000_000 },
  inviter_signature: 'ab'.repeat(64),
};

describe('invitation text', () => {
  it('is one inv1. line with id fields as hex, and reads back to the wire form', () => {
    const text = invitationToText({ invitation: signed, groupName: 'team' });
    expect(text).toMatch(/^inv1\.[A-Za-z0-9_-]+$/);
    const inner = JSON.parse(Buffer.from(text.slice(5), 'base64url').toString('utf8'));
    expect(inner.invitation.invitation.group_id).toBe('01'.repeat(32));
    expect(invitationFromText(`  ${text}\n`)).toEqual({ invitation: signed, groupName: 'team' });
  });

  it('reads what the CLI prints (the same encoding)', () => {
    const cli = `inv1.${Buffer.from(JSON.stringify({ ...signed, invitation: { ...signed.invitation, group_id: '01'.repeat(32), inviter_identity: 'ab'.repeat(32), secret_salt: '0102' } })).toString('base64url')}`;
    expect(invitationFromText(cli)).toEqual(signed);
  });

  it('refuses text that is not a whole invitation', () => {
    expect(() => invitationFromText('{"a":1}')).toThrow(/not an invitation/);
    expect(() => invitationFromText('inv1.eyJpbnZ')).toThrow(/cut or changed/);
    expect(() => invitationFromText('inv1.a b')).toThrow(/not an invitation/);
  });
});
