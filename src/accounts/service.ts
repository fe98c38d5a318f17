/**
 * Accounts and devices (admin spec "Account and devices"; admin-wire-b §3, §2.14): every route acts
 * on this node's own account, which this node holds the root of. The device registry is node-local
 * (registry.ts); a device's authority inside a namespace is a binding written into that
 * namespace's governance log (device-ops.ts), so replication carries it.
 */
import type { Clock } from '../clock.ts';
import { accountIdOf, deviceIdOf } from '../crypto/ids.ts';
import { randomBytes } from 'node:crypto';
import { badRequest, conflict, forbidden, notFound, rateLimited } from '../errors.ts';
import { Serial } from '../serial.ts';
import { type Governance, inAccountScope, type NamespaceState } from '../governance/index.ts';
import type { Store } from '../store/store.ts';
import type { NodeIdentity } from '../identity/identity.ts';
import { checkStatement, confirmationCode, encodeCredential, encodeStatement, statementDigest, type PairingOffer } from '../identity/pairing.ts';
import { DeviceRegistry, type DeviceRecord } from './registry.ts';
import { parseCredential, parseScopeProof } from '../identity/credentials.ts';

export type DeviceScope = 'all' | { only: string[] };
export type SkipReason = 'outOfScope' | 'alreadyBound' | 'noScopeKey' | 'revoked' | 'ownDevice' | 'failed';

export interface LinkOutcome {
  linkedIn: { namespaceId: string; keyDelivered: boolean }[];
  skipped: { namespaceId: string; reason: SkipReason }[];
}

export interface PairCompleteInput {
  deviceId: string;
  kemPublicKey: string;
  signPublicKey: string;
  statement: string;
  confirmationCode: string;
  applications: string[];
}

/** `sign-with-root` domains and the bytes each prefixes the payload with (admin-wire-b §3.8). */
export const ROOT_SIGN_DOMAINS: Record<string, string> = {
  'mdma.account-link': 'calimero.mdma.account-link.v1\0',
  'mdma.account-login': 'calimero.mdma.account-login.v1\0',
  'mdma.account-recovery': 'calimero.mdma.account-recovery.v1\0',
};

export const MAX_SCOPE_APPLICATIONS = 256;
/** one device's renames wait this long on each other (as the reference: renames publish an op each) */
export const DEVICE_RENAME_COOLDOWN_MS = 10_000;

export interface AccountServiceDeps {
  store: Store;
  identity: NodeIdentity;
  clock: Clock;
  governance: Governance;
  /** whether an application is installed on this node (a scope may only name known applications) */
  isInstalled?: (applicationId: string) => Promise<boolean>;
}

export class AccountService {
  readonly registry: DeviceRegistry;
  private readonly serial = new Serial();
  /** device → when this node last renamed it (node-local, like the reference's cooldown) */
  private readonly renamedAt = new Map<string, number>();

  constructor(private readonly d: AccountServiceDeps) {
    this.registry = new DeviceRegistry(d.store, d.identity);
  }

  load(): Promise<void> {
    return this.registry.load(this.d.clock.now());
  }

  get accountId(): string {
    return this.d.identity.accountId;
  }

  get selfDeviceId(): string {
    return this.d.identity.deviceId;
  }

  /** Namespaces this node's account takes part in (the account session's scope). */
  namespaces(): NamespaceState[] {
    return this.d.governance
      .namespaces()
      .filter((ns) => inAccountScope(ns, this.accountId))
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)); // stable across restarts
  }

  /** Namespaces holding a live binding for the device; the own device is bound wherever the account is. */
  boundIn(r: DeviceRecord): string[] {
    if (r.revoked) return [];
    if (r.deviceId === this.d.identity.deviceId) return this.namespaces().map((ns) => ns.id);
    return this.namespaces()
      .filter((ns) => this.isBound(ns, r.deviceId))
      .map((ns) => ns.id);
  }

  /**
   * NodeIdentity `revokedFrom`: set once a revocation of this node's device by its account has
   * reached the node (it arrives with another device's op; a node never revokes its own device).
   */
  revokedFrom(): { accountId: string; deviceId: string } | undefined {
    const self = this.d.identity.deviceId;
    const hit = this.d.governance.namespaces().some((ns) => ns.deviceBindings?.[this.accountId]?.[self]?.revokedAt !== undefined);
    return hit ? { accountId: this.accountId, deviceId: self } : undefined;
  }

  applications(): { applicationId: string; namespaces: string[] }[] {
    const byApp = new Map<string, string[]>();
    for (const ns of this.namespaces()) {
      const app = appOf(ns);
      byApp.set(app, [...(byApp.get(app) ?? []), ns.id]);
    }
    return [...byApp].map(([applicationId, namespaces]) => ({ applicationId, namespaces }));
  }

  /** Run on the new device's node: an offer signed by this node's signing key. */
  pairInit(rootPublicKey: string): PairingOffer & { statement: string; confirmationCode: string } {
    const accountId = accountIdOf(Buffer.from(rootPublicKey, 'hex'));
    const offer: PairingOffer = {
      accountId,
      deviceId: deviceIdOf(accountId, randomBytes(16)),
      kemPublicKey: this.d.identity.view().deviceAgreementKey as string,
      signPublicKey: this.d.identity.publicKey,
    };
    const issuedAt = BigInt(Math.floor(this.d.clock.now() / 1000));
    const statement = encodeStatement(issuedAt, this.d.identity.sign(statementDigest(offer, issuedAt)));
    return { ...offer, statement, confirmationCode: confirmationCode(offer) };
  }

  /** Run on the root holder: verifies the offer, certifies the device and binds it where its scope reaches. */
  pairComplete(input: PairCompleteInput) {
    return this.serial.run(async () => {
      const offer: PairingOffer = { accountId: this.accountId, ...pick(input) };
      const check = checkStatement(offer, input.statement, Math.floor(this.d.clock.now() / 1000));
      if (!check.ok) throw badRequest(`pairing statement invalid: ${check.reason}`);
      if (normaliseCode(input.confirmationCode) !== confirmationCode(offer)) {
        throw badRequest('pairing confirmation code does not match the offer');
      }
      if (input.deviceId === this.d.identity.deviceId) throw conflict('this node cannot pair its own device');
      const existing = this.registry.get(input.deviceId);
      if (existing?.revoked) throw forbidden(`device ${input.deviceId} is revoked and cannot be paired again`);
      const record: DeviceRecord = existing ?? {
        deviceId: input.deviceId,
        signingKey: input.signPublicKey,
        kemPublicKey: input.kemPublicKey,
        applications: [...new Set(input.applications)],
        revoked: false,
        labelEpoch: 0,
        addedAt: this.d.clock.now(),
      };
      await this.registry.put(record);
      const outcome = await this.linkInto(record);
      const credential = encodeCredential(
        { rootPublicKey: this.d.identity.rootPublicKey, deviceId: record.deviceId, signPublicKey: record.signingKey, kemPublicKey: input.kemPublicKey, deviceEpoch: 0 },
        (m) => this.d.identity.signWithRoot(m),
      );
      return {
        accountId: this.accountId,
        deviceId: record.deviceId,
        keyDelivered: outcome.linkedIn.some((l) => l.keyDelivered),
        confirmationCode: confirmationCode(offer),
        credential,
      };
    });
  }

  /** Add-only: the named applications join the scope; an empty list widens it to everything. */
  relink(deviceId: string, applications: string[]) {
    return this.serial.run(async () => {
      const record = this.device(deviceId);
      if (!record.revoked && deviceId !== this.d.identity.deviceId) {
        const widened = applications.length === 0 || record.applications.length === 0 ? [] : [...new Set([...record.applications, ...applications])];
        record.applications = widened;
        await this.registry.put(record);
      }
      const outcome = await this.linkInto(record);
      return { accountId: this.accountId, deviceId, applications: record.applications, ...outcome };
    });
  }

  /** Replaces the scope; namespaces no longer covered lose the device's binding. */
  rescope(deviceId: string, scope: DeviceScope) {
    return this.serial.run(async () => {
      const record = this.device(deviceId);
      if (deviceId === this.d.identity.deviceId) throw forbidden('the scope of the device holding the account root cannot be replaced');
      if (record.revoked) throw forbidden(`device ${deviceId} is revoked`);
      if (scope !== 'all') await this.requireKnownApplications(scope.only);
      record.applications = scope === 'all' ? [] : [...new Set(scope.only)];
      await this.registry.put(record);
      const descoped: { namespaceId: string; keyRotated: boolean }[] = [];
      for (const ns of this.namespaces()) {
        if (this.isBound(ns, deviceId) && !covers(record, ns)) {
          await this.d.governance.submit(ns.id, ns.id, 'account.device.unlinked', { account: this.accountId, deviceId });
          descoped.push({ namespaceId: ns.id, keyRotated: false });
        }
      }
      const outcome = await this.linkInto(record);
      return { accountId: this.accountId, deviceId, applications: record.applications, descoped, ...outcome };
    });
  }

  /**
   * A scope names applications the account's devices may speak for: one this node neither has
   * installed nor sees as a namespace's application is a typo, not a scope (reference:
   * ScopeReplacementUnknownApplication → 400).
   */
  private async requireKnownApplications(ids: string[]): Promise<void> {
    const targeted = new Set(this.namespaces().map(appOf));
    for (const id of ids) {
      if (targeted.has(id) || (await this.d.isInstalled?.(id))) continue;
      throw badRequest(`unknown application ${id}: it is neither installed on this node nor the application of a namespace of the account`);
    }
  }

  label(deviceId: string, label: string) {
    return this.serial.run(async () => {
      const record = this.device(deviceId);
      const last = this.renamedAt.get(deviceId);
      const now = this.d.clock.now();
      if (last !== undefined && now - last < DEVICE_RENAME_COOLDOWN_MS) {
        const secs = DEVICE_RENAME_COOLDOWN_MS / 1000;
        throw rateLimited(`device ${deviceId} was renamed less than ${secs}s ago; try again shortly`, (last + DEVICE_RENAME_COOLDOWN_MS - now) / 1000);
      }
      const taken = this.registry.all().find((r) => r.deviceId !== deviceId && !r.revoked && r.label?.toLowerCase() === label.toLowerCase());
      if (taken) throw conflict(`label '${label}' is already used by another device of the account`);
      if (record.labelEpoch >= 0xffffffff) throw conflict('device label epoch exhausted');
      record.label = label;
      record.labelEpoch += 1;
      await this.registry.put(record);
      this.renamedAt.set(deviceId, now);
      return { accountId: this.accountId, deviceId, label, labelEpoch: record.labelEpoch };
    });
  }

  /** Withdraws the device in every namespace of the account (forward-only). */
  revoke(namespaceId: string, deviceId: string) {
    return this.serial.run(async () => {
      const record = this.device(deviceId);
      if (deviceId === this.d.identity.deviceId) throw forbidden("this node cannot revoke its own device (RevocationOfOwnDevice)");
      if (record.revoked) throw conflict(`device ${deviceId} is already revoked`);
      const revokedIn: { namespaceId: string; keyRotated: boolean }[] = [];
      for (const ns of this.namespaces()) {
        await this.d.governance.submit(ns.id, ns.id, 'account.device.revoked', { account: this.accountId, deviceId });
        revokedIn.push({ namespaceId: ns.id, keyRotated: false });
      }
      record.revoked = true;
      record.revokedAt = this.d.clock.now();
      await this.registry.put(record);
      const here = revokedIn.find((r) => r.namespaceId === namespaceId);
      return { accountId: this.accountId, deviceId, keyRotated: here?.keyRotated ?? false, revokedIn };
    });
  }

  /** Carries the link of a device (of any account) into a namespace, endorsed by this node's account. */
  linkDevice(namespaceId: string, credential: string, scope: string) {
    return this.serial.run(async () => {
      const cred = parseCredential(credential);
      const sc = parseScopeProof(scope);
      if (sc.accountId !== cred.accountId || sc.deviceId !== cred.deviceId) throw badRequest("scope does not name the credential's device (DeviceLinkInvalid)");
      const ns = this.d.governance.namespace(namespaceId);
      const bound = ns?.deviceBindings?.[cred.accountId]?.[cred.deviceId];
      const answer = (alreadyBound: boolean) => ({ accountId: cred.accountId, deviceId: cred.deviceId, alreadyBound });
      if (bound && bound.revokedAt === undefined) return answer(true);
      await this.d.governance.submit(namespaceId, namespaceId, 'account.device.linked', {
        account: cred.accountId,
        deviceId: cred.deviceId,
        signingKey: cred.signingKey,
        credential,
        scope,
      });
      return answer(false);
    });
  }

  signWithRoot(domain: string, payload: Buffer) {
    const prefix = ROOT_SIGN_DOMAINS[domain];
    if (!prefix) throw badRequest(`unknown domain '${domain}'; accepted: ${Object.keys(ROOT_SIGN_DOMAINS).join(', ')}`);
    const sig = this.d.identity.signWithRoot(Buffer.concat([Buffer.from(prefix, 'utf8'), payload]));
    return { rootPublicKey: this.d.identity.rootPublicKey, signature: Buffer.from(sig, 'hex').toString('base64'), accountId: this.accountId };
  }

  device(deviceId: string): DeviceRecord {
    const r = this.registry.get(deviceId);
    if (!r) throw notFound(`device ${deviceId} is not a device of account ${this.accountId}`);
    return r;
  }

  private isBound(ns: NamespaceState, deviceId: string): boolean {
    const b = ns.deviceBindings?.[this.accountId]?.[deviceId];
    return b !== undefined && b.revokedAt === undefined;
  }

  private async linkInto(record: DeviceRecord): Promise<LinkOutcome> {
    const out: LinkOutcome = { linkedIn: [], skipped: [] };
    for (const ns of this.namespaces()) {
      const namespaceId = ns.id;
      if (record.deviceId === this.d.identity.deviceId) out.skipped.push({ namespaceId, reason: 'ownDevice' });
      else if (record.revoked) out.skipped.push({ namespaceId, reason: 'revoked' });
      else if (!covers(record, ns)) out.skipped.push({ namespaceId, reason: 'outOfScope' });
      else if (this.isBound(ns, record.deviceId)) out.skipped.push({ namespaceId, reason: 'alreadyBound' });
      else if (ns.deviceBindings?.[this.accountId]?.[record.deviceId]?.revokedAt !== undefined) out.skipped.push({ namespaceId, reason: 'revoked' });
      else {
        await this.d.governance.submit(namespaceId, namespaceId, 'account.device.linked', { account: this.accountId, deviceId: record.deviceId, signingKey: record.signingKey });
        // group keys are delivered over the network (a later issue): the device re-requests its key
        out.linkedIn.push({ namespaceId, keyDelivered: false });
      }
    }
    return out;
  }
}

const appOf = (ns: NamespaceState): string => ns.groups[ns.id]?.targetApplicationId ?? ns.targetApplicationId;
const covers = (r: DeviceRecord, ns: NamespaceState): boolean => r.applications.length === 0 || r.applications.includes(appOf(ns));
const normaliseCode = (c: string): string => c.trim().toUpperCase();
const pick = (i: PairCompleteInput) => ({ deviceId: i.deviceId, kemPublicKey: i.kemPublicKey, signPublicKey: i.signPublicKey });
