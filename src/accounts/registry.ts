/**
 * The account's device registry (admin spec "Account device entry"; admin-wire-b §3.1): every device
 * this account certified, revoked ones kept, with its scope (applications it may speak for; empty =
 * every application), its replicated label and label epoch. Persisted in the store; the node's own
 * device is always present.
 */
import type { NodeIdentity } from '../identity/identity.ts';
import { collect, type Store } from '../store/store.ts';

export interface DeviceRecord {
  deviceId: string;
  signingKey: string;
  kemPublicKey?: string;
  /** application ids the device may speak for; empty means every application */
  applications: string[];
  revoked: boolean;
  /** Unix milliseconds */
  revokedAt?: number;
  label?: string;
  /** u32: orders a label against a concurrent rename (higher wins) */
  labelEpoch: number;
  /** Unix milliseconds */
  addedAt: number;
}

export class DeviceRegistry {
  private readonly space;
  private readonly records = new Map<string, DeviceRecord>();

  constructor(
    store: Store,
    private readonly identity: NodeIdentity,
  ) {
    this.space = store.space<DeviceRecord>('account.devices');
  }

  async load(nowMs: number): Promise<void> {
    for (const [id, r] of await collect(this.space.entries())) this.records.set(id, r);
    if (!this.records.has(this.identity.deviceId)) {
      await this.put({
        deviceId: this.identity.deviceId,
        signingKey: this.identity.publicKey,
        kemPublicKey: this.identity.view().deviceAgreementKey ?? undefined,
        applications: [],
        revoked: false,
        labelEpoch: 0,
        addedAt: nowMs,
      });
    }
  }

  get(deviceId: string): DeviceRecord | undefined {
    return this.records.get(deviceId);
  }

  /** The own device first, then in the order they were added. */
  all(): DeviceRecord[] {
    const self = this.identity.deviceId;
    return [...this.records.values()].sort((a, b) => (a.deviceId === self ? -1 : b.deviceId === self ? 1 : a.addedAt - b.addedAt || (a.deviceId < b.deviceId ? -1 : 1)));
  }

  async put(record: DeviceRecord): Promise<void> {
    await this.space.put(record.deviceId, record);
    this.records.set(record.deviceId, record);
  }
}
