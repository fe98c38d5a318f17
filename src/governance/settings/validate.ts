/**
 * Validation of the settings family's values (admin spec "Capabilities, settings and metadata",
 * "TEE resources"; admin-wire-b §6.1, §6.3–§6.6). Pure functions shared by the appliers (so an op
 * from a peer is held to the same rules as one authored here): each normalises its input or throws
 * a 400 naming what is wrong.
 */
import { badRequest } from '../../errors.ts';
import type { TeeAdmissionLists } from '../../wire/capabilities.ts';

export const U32_MAX = 0xffff_ffff;

/** A u32 capability mask; undefined bits are kept (a newer peer's bit must survive, §6.1). */
export function requireMask(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > U32_MAX) {
    throw badRequest(`${field} must be an unsigned 32-bit integer`);
  }
  return value;
}

export type Visibility = 'open' | 'restricted';

export function requireVisibility(value: unknown): Visibility {
  if (value !== 'open' && value !== 'restricted') throw badRequest(`subgroupVisibility must be 'open' or 'restricted'`);
  return value;
}

/** Metadata limits (admin-wire-b §6.6, the reference's `metadata.rs`). */
export const METADATA_LIMITS = { nameBytes: 64, entries: 64, keyBytes: 64, valueBytes: 4096 } as const;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** Checks a metadata write: `name` (absent keeps the stored one, empty is refused) and the `data` map. */
export function validateMetadata(name: unknown, data: unknown): { name?: string; data: Record<string, string> } {
  if (name !== undefined && name !== null) {
    if (typeof name !== 'string') throw badRequest('metadata: name must be a string');
    if (name === '') throw badRequest('metadata: name must not be empty; omit it to keep the current name');
    if (bytes(name) > METADATA_LIMITS.nameBytes) throw badRequest(`metadata: name exceeds ${METADATA_LIMITS.nameBytes} bytes`);
  }
  const map = data ?? {};
  if (typeof map !== 'object' || Array.isArray(map)) throw badRequest('metadata: data must be an object of strings');
  const entries = Object.entries(map as Record<string, unknown>);
  if (entries.length > METADATA_LIMITS.entries) throw badRequest(`metadata: more than ${METADATA_LIMITS.entries} entries`);
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (k === '') throw badRequest('metadata: keys must not be empty');
    if (bytes(k) > METADATA_LIMITS.keyBytes) throw badRequest(`metadata: key '${k.slice(0, 16)}…' exceeds ${METADATA_LIMITS.keyBytes} bytes`);
    if (typeof v !== 'string') throw badRequest(`metadata: value of '${k}' must be a string`);
    if (bytes(v) > METADATA_LIMITS.valueBytes) throw badRequest(`metadata: value of '${k}' exceeds ${METADATA_LIMITS.valueBytes} bytes`);
    out[k] = v;
  }
  return { name: typeof name === 'string' ? name : undefined, data: out };
}

/** The stored TEE admission policy (both forms), in the GET's field order (src/wire/capabilities.ts). */
export type TeeAdmissionPolicy = TeeAdmissionLists;

const MEASUREMENTS = ['allowedMrtd', 'allowedRtmr0', 'allowedRtmr1', 'allowedRtmr2', 'allowedRtmr3'] as const;
/** the lists the measurements form requires (RTMR0 is optional there, §6.4) */
const REQUIRED_MEASUREMENTS = ['allowedMrtd', 'allowedRtmr1', 'allowedRtmr2', 'allowedRtmr3'] as const;

function stringList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw badRequest(`${field} must be a list of strings`);
  if (value.some((v: string) => v.trim() === '')) throw badRequest(`${field} must not contain a blank entry`);
  return value as string[];
}

/** `X`, `X.Y` or `X.Y.Z` (digits) normalised to `X.Y.Z` (the reference normalises before signing). */
export function normaliseReleaseVersion(v: string): string {
  const m = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(v.trim());
  if (!m) throw badRequest(`signedRelease.minReleaseVersion must be a version X.Y.Z, got '${v}'`);
  return [m[1], m[2] ?? '0', m[3] ?? '0'].map((n) => String(Number(n))).join('.');
}

/**
 * Validates a SetTeeAdmissionPolicyRequest (spec "TEE resources"; admin-wire-b §6.4):
 * measurements form — MRTD and RTMR1..3 each non-empty, also with `acceptMock`; signed-release
 * form — a non-blank profile and every measurement list empty; `mode` replica (default) or relay.
 */
export function validateAdmissionPolicy(body: Record<string, unknown>): TeeAdmissionPolicy {
  const lists = Object.fromEntries(MEASUREMENTS.map((f) => [f, stringList(body[f], f)])) as Record<(typeof MEASUREMENTS)[number], string[]>;
  const allowedTcbStatuses = stringList(body.allowedTcbStatuses, 'allowedTcbStatuses');
  if (body.acceptMock !== undefined && typeof body.acceptMock !== 'boolean') throw badRequest('acceptMock must be a boolean');
  const acceptMock = body.acceptMock === true;
  const mode = body.mode ?? 'replica';
  if (mode !== 'replica' && mode !== 'relay') throw badRequest(`mode must be 'replica' or 'relay'`);
  const policy: TeeAdmissionPolicy = { ...lists, allowedTcbStatuses, acceptMock, mode };
  const sr = body.signedRelease;
  if (sr === undefined || sr === null) {
    const missing = REQUIRED_MEASUREMENTS.filter((f) => lists[f].length === 0);
    if (missing.length) {
      throw badRequest(
        `TEE admission policy (measurements form): ${missing.join(', ')} must not be empty${acceptMock ? ' (also with acceptMock: name the all-zero measurement)' : ''}`,
      );
    }
    return policy;
  }
  if (typeof sr !== 'object' || Array.isArray(sr)) throw badRequest('signedRelease must be an object');
  const { allowedProfiles: rawProfiles, minReleaseVersion } = sr as Record<string, unknown>;
  const allowedProfiles = stringList(rawProfiles, 'signedRelease.allowedProfiles');
  if (allowedProfiles.length === 0) throw badRequest('signedRelease.allowedProfiles must name at least one profile');
  const present = MEASUREMENTS.filter((f) => lists[f].length > 0);
  if (present.length) throw badRequest(`TEE admission policy (signed-release form): ${present.join(', ')} must be empty`);
  if (minReleaseVersion !== undefined && minReleaseVersion !== null && typeof minReleaseVersion !== 'string') {
    throw badRequest('signedRelease.minReleaseVersion must be a string');
  }
  policy.signedRelease = {
    allowedProfiles,
    ...(typeof minReleaseVersion === 'string' ? { minReleaseVersion: normaliseReleaseVersion(minReleaseVersion) } : {}),
  };
  return policy;
}

/** A TEE authoring policy: the MRTDs whose TEEs may author; an empty list switches authorship off. */
export function validateAuthoringPolicy(allowedMrtd: unknown): { allowedMrtd: string[] } {
  return { allowedMrtd: stringList(allowedMrtd, 'allowedMrtd') };
}
