import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import type { SignedGroupOpenInvitation } from '../client/index.ts';
import { UsageError } from './exit.ts';
import {
  capabilityNames,
  capabilityOptions,
  describeMask,
  idArg,
  maskFromOptions,
  metadataRequest,
  pickInvitation,
  readJsonArg,
  renderMetadata,
  roleArg,
  switchArg,
} from './group-args.ts';
import { decodeByteFields } from './output.ts';

const signed = (byte: number): SignedGroupOpenInvitation => ({
  invitation: {
    inviter_identity: Array(32).fill(1),
    group_id: Array(32).fill(byte),
    expiration_timestamp: 1,
    secret_salt: Array(32).fill(2),
    invited_role: 1,
    admitters: [],
  },
  inviter_signature: 'ab'.repeat(64),
});

describe('ids and roles', () => {
  it('normalises hex and base58 ids and refuses anything else naming the id', () => {
    const parse = idArg('group id');
    expect(parse('AB'.repeat(32))).toBe('ab'.repeat(32));
    expect(parse('11111111111111111111111111111111')).toBe('00'.repeat(32));
    // shorter hex is a prefix, resolved against the node later (src/cli/refs.ts); under 6 is refused
    expect(parse('ab'.repeat(31))).not.toBe('ab'.repeat(31));
    expect(() => parse('ab12')).toThrow(InvalidArgumentError);
    expect(() => parse('nope')).toThrow(/not a group id/);
  });

  it('reads roles in any case and refuses TEE roles', () => {
    expect(roleArg('admin')).toBe('Admin');
    expect(roleArg('read-only')).toBe('ReadOnly');
    expect(roleArg('ReadOnly')).toBe('ReadOnly');
    expect(() => roleArg('ReadOnlyTee')).toThrow(InvalidArgumentError);
  });
});

describe('invitations', () => {
  it('takes the signed object, the invite answer, or the entry of a recursive list', () => {
    const a = signed(0xaa);
    const b = signed(0xbb);
    expect(pickInvitation(a)).toEqual(a);
    expect(pickInvitation({ invitation: a, groupName: 'x' })).toEqual(a);
    const list = { invitations: [{ groupId: 'aa'.repeat(32), invitation: a }, { groupId: 'bb'.repeat(32), invitation: b }] };
    expect(pickInvitation(list, 'bb'.repeat(32))).toEqual(b);
    // as the CLI prints it: byte fields as hex, turned back into the bytes the node signed
    expect(pickInvitation(decodeByteFields({ invitation: a, groupName: 'x' }))).toEqual(a);
    expect(pickInvitation(decodeByteFields(list), 'bb'.repeat(32))).toEqual(b);
    expect(() => pickInvitation(list)).toThrow(/holds no invitation .*aaaa/);
    expect(() => pickInvitation({ hello: 1 })).toThrow(UsageError);
    expect(() => pickInvitation('text')).toThrow(/not an invitation/);
  });
});

describe('JSON arguments', () => {
  it('reads a value, an @file, and names the problem when the file or the JSON is bad', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hearth-args-'));
    try {
      expect(await readJsonArg('{"a":1}', 'x')).toEqual({ a: 1 });
      await writeFile(join(dir, 'f.json'), '{"n": 18446744073709551615}');
      expect(await readJsonArg(`@${join(dir, 'f.json')}`, 'x')).toEqual({ n: 18446744073709551615n });
      await expect(readJsonArg(`@${join(dir, 'missing.json')}`, 'invitation')).rejects.toThrow(/invitation: cannot read file .*no such file or directory/);
      await expect(readJsonArg('{nope', 'invitation')).rejects.toThrow(/invitation from the argument is not valid JSON/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('capabilities', () => {
  const parse = (argv: string[]) => capabilityOptions(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined })).parse(argv, { from: 'user' }).opts();

  it('builds the whole mask from flags, or takes --mask, never both', () => {
    expect(maskFromOptions(parse(['--can-create-context', '--can-invite-members']))).toBe(3);
    expect(maskFromOptions(parse(['--can-author-on-behalf']))).toBe(512);
    expect(maskFromOptions(parse(['--mask', '0']))).toBe(0);
    expect(() => maskFromOptions(parse([]))).toThrow(/--mask 0 clears them/);
    expect(() => maskFromOptions(parse(['--mask', '1', '--manage-members']))).toThrow(/not both/);
    expect(() => parse(['--mask', '-1'])).toThrow();
  });

  it('names the bits of a mask, undefined bits by number', () => {
    expect(capabilityNames(5)).toEqual(['CAN_CREATE_CONTEXT', 'CAN_JOIN_OPEN_SUBGROUPS']);
    expect(describeMask(0)).toBe('0 (none)');
    expect(describeMask(1 << 12)).toBe('4096 (bit 12)');
  });
});

describe('metadata set', () => {
  const current = { name: 'old', data: { a: '1', b: '2' }, updatedAt: 0, updatedBy: 'ab'.repeat(32) };

  it('merges --set / --unset into the stored map and keeps the name unless given', async () => {
    expect(await metadataRequest(current, { set: ['c=3=x'], unset: ['a'] })).toEqual({ data: { b: '2', c: '3=x' } });
    expect(await metadataRequest(null, { name: 'n' })).toEqual({ name: 'n', data: {} });
    expect(await metadataRequest(current, { replaceData: true, set: ['z=9'] })).toEqual({ data: { z: '9' } });
    expect(await metadataRequest(current, { data: '{"k":"v"}' })).toEqual({ data: { k: 'v' } });
  });

  it('refuses an empty change and a --data map with non-string values', async () => {
    await expect(metadataRequest(current, {})).rejects.toThrow(/nothing to change/);
    await expect(metadataRequest(current, { data: '{"k":1}' })).rejects.toThrow(/values are strings/);
  });

  it('renders a record and the absence of one', () => {
    expect(renderMetadata(null, 'none here')).toBe('none here');
    expect(renderMetadata(current, '')).toContain('  a = 1\n  b = 2');
  });
});

describe('switchArg', () => {
  it('reads on/off (and true/false, yes/no, any case); refuses anything else', () => {
    for (const v of ['on', 'ON', 'true', 'yes']) expect(switchArg(v)).toBe(true);
    for (const v of ['off', 'Off', 'false', 'no']) expect(switchArg(v)).toBe(false);
    for (const v of ['', 'maybe', '1', 'onn']) expect(() => switchArg(v)).toThrow(InvalidArgumentError);
  });
});
