/**
 * Argument parsing shared by `hearth namespace` and `hearth group` (issue #6; product.md §10):
 * ids checked at parse time, roles, capability flags, JSON arguments from a value, `@file` or `-`
 * (stdin), invitations as `namespace invite` / `group invite` print them, and the metadata
 * read-modify-write options. Nothing here talks to a node.
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { CAPABILITIES, INVITATION_TEXT_PREFIX, invitationFromText, invitationToText, parseJson, type GroupRole, type MetadataRecord, type SetMetadataRequest, type SignedGroupOpenInvitation } from '../client/index.ts';
import { UsageError } from './exit.ts';
import { positiveInt } from './connect.ts';
import { idArgFor } from './id-args.ts';
import { readJson, readTextArg } from './json-args.ts';
import { restoreByteFields } from './output.ts';

/** A commander argument parser: 64 hex or base58 of 32 bytes → 64 lowercase hex, naming `what`. */
export const idArg = idArgFor;

/** Collects a repeatable id option. */
export function idList(what: string): (value: string, previous?: string[]) => string[] {
  const one = idArg(what);
  return (value, previous = []) => [...previous, one(value)];
}

const ROLES: Record<string, GroupRole> = { admin: 'Admin', member: 'Member', readonly: 'ReadOnly' };

/** `admin | member | read-only` (any case; `ReadOnly` too). TEE roles are given by admission only. */
export function roleArg(value: string): GroupRole {
  const role = ROLES[value.toLowerCase().replace(/[-_]/g, '')];
  if (!role) throw new InvalidArgumentError('expected admin, member or read-only');
  return role;
}

/** `on`/`off` (also `true`/`false`, `yes`/`no`) for a boolean setting. */
export function switchArg(value: string): boolean {
  const v = value.toLowerCase();
  if (['on', 'true', 'yes'].includes(v)) return true;
  if (['off', 'false', 'no'].includes(v)) return false;
  throw new InvalidArgumentError('expected on or off');
}

export function visibilityArg(value: string): 'open' | 'restricted' {
  const v = value.toLowerCase();
  if (v !== 'open' && v !== 'restricted') throw new InvalidArgumentError('expected open or restricted');
  return v;
}

export const secondsArg = positiveInt('seconds');

/** A JSON argument from a value, `@file` or `-` (see json-args.ts). */
export const readJsonArg = readJson;

const hexOf = (bytes: unknown): string | undefined =>
  Array.isArray(bytes) && bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256) ? Buffer.from(bytes as number[]).toString('hex') : undefined;

const isSigned = (v: unknown): v is SignedGroupOpenInvitation =>
  typeof v === 'object' && v !== null && 'inviter_signature' in v && typeof (v as { invitation?: unknown }).invitation === 'object';

/** The group an invitation is for (64 hex), from its signed body. */
export function invitationGroup(inv: SignedGroupOpenInvitation): string | undefined {
  return hexOf(inv.invitation?.group_id);
}

/**
 * The signed invitation out of what `invite` printed: the signed object itself, the
 * `{invitation, groupName}` answer, or a recursive `{invitations: [...]}` answer (then the entry for
 * `groupId`, which must be given), as printed (byte fields as hex) or `--raw`. Anything else is a
 * usage error.
 */
export function pickInvitation(printed: unknown, groupId?: string): SignedGroupOpenInvitation {
  // printed with its byte fields as hex (output.ts); the node takes them as byte arrays
  const value = restoreByteFields(printed);
  if (isSigned(value)) return value;
  if (typeof value === 'object' && value !== null) {
    const inner = (value as { invitation?: unknown }).invitation;
    if (isSigned(inner)) return inner;
    const list = (value as { invitations?: unknown }).invitations;
    if (Array.isArray(list)) {
      const signed = list.map((e) => (e as { invitation?: unknown })?.invitation).filter(isSigned);
      const match = signed.find((s) => invitationGroup(s) === groupId);
      if (match) return match;
      const groups = signed.map(invitationGroup).join(', ');
      throw new UsageError(`the invitation list holds no invitation for ${groupId ?? 'the group (name it)'}; it has: ${groups || 'none'}`);
    }
  }
  throw new UsageError('not an invitation: expected the JSON that "hearth namespace invite" or "hearth group invite" prints');
}

/**
 * Invitations as one line (issue #25 §3): `inv1.` and the base64url of the invitation's JSON with
 * its id fields as hex — the SDK's codec (src/client/invitation-text.ts), which the dashboard uses
 * too, so a line from either joins with either.
 */
export const INVITATION_PREFIX = INVITATION_TEXT_PREFIX;

export const encodeInvitation = (printed: unknown): string => invitationToText(printed);

export function decodeInvitation(text: string): unknown {
  try {
    return invitationFromText(text);
  } catch (err) {
    throw new UsageError(`${(err as Error).message.replace(/"Invite" \(or hearth namespace invite\)/, 'hearth namespace invite')}`);
  }
}

/** An invitation argument: the `inv1.` line or the JSON, given inline, as `@file` or `-` (stdin). */
export async function readInvitationArg(value: string): Promise<unknown> {
  if (value.trim().startsWith(INVITATION_PREFIX)) return decodeInvitation(value);
  const { text, source } = await readTextArg(value, 'invitation');
  if (text.trim().startsWith(INVITATION_PREFIX)) return decodeInvitation(text);
  if (text.trim() === '') throw new UsageError(`invitation: empty ${source}`);
  try {
    return parseJson(text);
  } catch {
    throw new UsageError(`invitation from ${source} is neither an inv1. line nor JSON: pass what "hearth namespace invite" printed`);
  }
}

// ---- capabilities -------------------------------------------------------------------------

type CapabilityName = keyof typeof CAPABILITIES;
const CAPABILITY_NAMES = Object.keys(CAPABILITIES) as CapabilityName[];
const flagOf = (name: CapabilityName) => name.toLowerCase().replace(/_/g, '-');
const attrOf = (name: CapabilityName) => flagOf(name).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The names of the bits set in `mask` (undefined bits as `bit N`). */
export function capabilityNames(mask: number): string[] {
  const names: string[] = CAPABILITY_NAMES.filter((n) => (mask & CAPABILITIES[n]) !== 0);
  for (let bit = 0; bit < 32; bit++) {
    const v = (1 << bit) >>> 0;
    if ((mask & v) !== 0 && !CAPABILITY_NAMES.some((n) => CAPABILITIES[n] === v)) names.push(`bit ${bit}`);
  }
  return names;
}

export function describeMask(mask: number): string {
  const names = capabilityNames(mask);
  return `${mask} (${names.length ? names.join(', ') : 'none'})`;
}

function maskArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new InvalidArgumentError('expected an unsigned 32-bit integer');
  return n;
}

/** One `--<capability>` flag per named bit, and `--mask <n>` for the raw value. */
export function capabilityOptions(cmd: Command): Command {
  for (const name of CAPABILITY_NAMES) cmd.option(`--${flagOf(name)}`, `include ${name} (bit ${Math.log2(CAPABILITIES[name])})`);
  return cmd.option('--mask <n>', 'the whole mask as a number (instead of the flags; 0 clears every bit)', maskArg);
}

/** The whole mask the flags name; a usage error when none is given or both forms are. */
export function maskFromOptions(opts: Record<string, unknown>): number {
  const named = CAPABILITY_NAMES.filter((n) => opts[attrOf(n)] === true);
  if (opts.mask !== undefined) {
    if (named.length) throw new UsageError('pass either --mask or capability flags, not both');
    return opts.mask as number;
  }
  if (!named.length) throw new UsageError(`name the capabilities to hold (e.g. --${flagOf('CAN_CREATE_CONTEXT')}) or pass --mask <n> (--mask 0 clears them)`);
  return named.reduce((m, n) => (m | CAPABILITIES[n]) >>> 0, 0);
}

// ---- metadata -----------------------------------------------------------------------------

export interface MetadataFlags {
  name?: string;
  set?: string[];
  unset?: string[];
  data?: string;
  replaceData?: boolean;
}

function keyValue(value: string, previous: string[] = []): string[] {
  if (!value.includes('=')) throw new InvalidArgumentError('expected key=value');
  return [...previous, value];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The options of a metadata `set` (read-modify-write of the stored record). */
export function metadataOptions(cmd: Command): Command {
  return cmd
    .option('--name <text>', 'display name (absent keeps the stored one)')
    .option('--set <key=value>', 'insert or overwrite a data entry (repeatable)', keyValue)
    .option('--unset <key>', 'remove a data entry (repeatable)', collect)
    .option('--data <json|@file|->', 'replace the data map with this JSON object of strings')
    .option('--replace-data', 'start from an empty map instead of the stored one');
}

/** Combines the stored record with the flags into the request a `set` sends. */
export async function metadataRequest(current: MetadataRecord | null, flags: MetadataFlags): Promise<SetMetadataRequest> {
  if (flags.name === undefined && !flags.set?.length && !flags.unset?.length && flags.data === undefined && !flags.replaceData) {
    throw new UsageError('nothing to change: pass --name, --set key=value, --unset key, --data or --replace-data');
  }
  let data: Record<string, string>;
  if (flags.data !== undefined) {
    const parsed = await readJsonArg(flags.data, '--data');
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
      throw new UsageError('--data must be a JSON object whose values are strings');
    }
    data = { ...(parsed as Record<string, string>) };
  } else {
    data = flags.replaceData ? {} : { ...(current?.data ?? {}) };
  }
  for (const pair of flags.set ?? []) {
    const at = pair.indexOf('=');
    data[pair.slice(0, at)] = pair.slice(at + 1);
  }
  for (const key of flags.unset ?? []) delete data[key];
  return { ...(flags.name !== undefined ? { name: flags.name } : {}), data };
}

/** A metadata record as `key: value` lines, or `none` when nothing is set. */
export function renderMetadata(record: MetadataRecord | null, none: string): string {
  if (!record) return none;
  const entries = Object.entries(record.data ?? {});
  return [
    `name:       ${record.name ?? '-'}`,
    `updated at: ${new Date(Number(record.updatedAt)).toISOString()}`,
    `updated by: ${record.updatedBy}`,
    `data:       ${entries.length ? '' : '(empty)'}`.trimEnd(),
    ...entries.map(([k, v]) => `  ${k} = ${v}`),
  ].join('\n');
}
