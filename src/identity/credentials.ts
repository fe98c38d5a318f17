/**
 * Device proofs that verify from their bytes alone (admin-wire-b §2.15, §3.4; domain.md §3.1): the
 * device credential (`AccountProof<DeviceCert>`) and the device scope proof
 * (`AccountProof<DeviceScope>`), in hearth's layout. Both carry the account root public key, so the
 * account id re-derives from it and the root signature is checked with no earlier state; that is
 * what lets a member node carry the link of another account's device into a namespace log.
 *
 * credential = 0x01 ‖ root(32) ‖ device(32) ‖ sign(32) ‖ kem(32) ‖ u32le keyEpoch ‖ u32le deviceEpoch ‖ sig(64)
 *   sig = root over domain_hash("calimero.device.cert.v1", [root, device, sign, kem, epochs])
 * scope      = 0x01 ‖ root(32) ‖ device(32) ‖ u32le scopeEpoch ‖ u8 (0 all | 1 only) ‖ [u32le n ‖ n × app(32)] ‖ sig(64)
 *   sig = root over domain_hash("calimero.device.scope.v1", [everything between the version byte and sig])
 */
import { accountIdOf, domainHash, isHexBytes, toHex } from '../crypto/ids.ts';
import { ed25519Verify } from '../crypto/keys.ts';
import { badRequest } from '../errors.ts';

export interface DeviceCredential {
  accountId: string;
  rootPublicKey: string;
  deviceId: string;
  signingKey: string;
  kemPublicKey: string;
}

export interface DeviceScopeProof {
  accountId: string;
  deviceId: string;
  /** empty = every application */
  applications: string[];
}

const invalid = (what: string) => badRequest(`${what} (DeviceLinkInvalid)`);

function bytesOf(hex: string, what: string): Buffer {
  if (!isHexBytes(hex)) throw invalid(`${what} must be non-empty hex`);
  return Buffer.from(hex, 'hex');
}

export function parseCredential(hex: string): DeviceCredential {
  const b = bytesOf(hex, 'credential');
  if (b.length !== 1 + 128 + 8 + 64 || b[0] !== 1) throw invalid('credential is not a version-1 device certificate');
  const root = b.subarray(1, 33);
  const fields = [root, b.subarray(33, 65), b.subarray(65, 97), b.subarray(97, 129), b.subarray(129, 137)];
  if (!ed25519Verify(toHex(root), domainHash('calimero.device.cert.v1', fields), b.subarray(137))) {
    throw invalid('credential signature does not verify against its account root');
  }
  return { accountId: accountIdOf(root), rootPublicKey: toHex(root), deviceId: toHex(fields[1]), signingKey: toHex(fields[2]), kemPublicKey: toHex(fields[3]) };
}

export function encodeScopeProof(
  f: { rootPublicKey: string; deviceId: string; scopeEpoch: number; applications: string[] | 'all' },
  signWithRoot: (m: Uint8Array) => string,
): string {
  const head = Buffer.alloc(5);
  head.writeUInt32LE(f.scopeEpoch, 0);
  head[4] = f.applications === 'all' ? 0 : 1;
  const apps = f.applications === 'all' ? [] : f.applications;
  const n = Buffer.alloc(4);
  n.writeUInt32LE(apps.length, 0);
  const tail = f.applications === 'all' ? [] : [n, ...apps.map((a) => Buffer.from(a, 'hex'))];
  const signed = Buffer.concat([Buffer.from(f.rootPublicKey, 'hex'), Buffer.from(f.deviceId, 'hex'), head, ...tail]);
  const sig = signWithRoot(domainHash('calimero.device.scope.v1', [signed]));
  return Buffer.concat([Buffer.from([1]), signed, Buffer.from(sig, 'hex')]).toString('hex');
}

export function parseScopeProof(hex: string): DeviceScopeProof {
  const b = bytesOf(hex, 'scope');
  if (b.length < 1 + 69 + 64 || b[0] !== 1) throw invalid('scope is not a version-1 device scope proof');
  const signed = b.subarray(1, b.length - 64);
  const root = signed.subarray(0, 32);
  const tag = signed[68];
  let applications: string[] = [];
  if (tag === 1) {
    const n = signed.length >= 73 ? signed.readUInt32LE(69) : -1;
    if (n < 1 || signed.length !== 73 + 32 * n) throw invalid('scope lists no applications or is truncated');
    applications = Array.from({ length: n }, (_, i) => toHex(signed.subarray(73 + 32 * i, 105 + 32 * i)));
  } else if (tag !== 0 || signed.length !== 69) throw invalid('scope is neither `all` nor `only`');
  if (!ed25519Verify(toHex(root), domainHash('calimero.device.scope.v1', [signed]), b.subarray(b.length - 64))) {
    throw invalid('scope signature does not verify against its account root');
  }
  return { accountId: accountIdOf(root), deviceId: toHex(signed.subarray(32, 64)), applications };
}
