/**
 * Bans per address (issue #37 item 7; docs/network.md "Penalties and bans"): node identities are
 * free, so a peer banned for hostile input comes back under a fresh key. When `threshold` distinct
 * identities connected from one address (an IPv4 address, an IPv6 /64: relay-guard.ts
 * `addressGroups`) were banned within `banMs`, the address itself is banned for `banMs`: the
 * connection gater refuses inbound connections from it before any handshake, and the network drops
 * the ones it holds. Relayed connections are never counted (their remote address is the relay's).
 * Memory is bounded: at most `threshold` identities per address, addresses swept past 1024.
 */
import type { PeerKey } from './network-port.ts';
import { addressGroups } from './relay-guard.ts';

export interface AddressBanPolicy {
  /** distinct identities banned from one address that ban the address */
  threshold: number;
  /** how long an identity's ban counts, and how long an address ban lasts */
  banMs: number;
}

export const DEFAULT_ADDRESS_BANS: AddressBanPolicy = { threshold: 4, banMs: 10 * 60_000 };

const SWEEP_AT = 1_024;

export class AddressBans {
  /** per address, the identities banned from it lately and when */
  private readonly banned = new Map<string, Map<PeerKey, number>>();
  private readonly bans = new Map<string, number>();

  constructor(
    private readonly policy: AddressBanPolicy = DEFAULT_ADDRESS_BANS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * An identity was banned; `remotes` are the multiaddrs it was connected from (direct ones).
   * Answers the addresses this banned (the caller drops their connections).
   */
  noteBan(peer: PeerKey, remotes: readonly string[]): string[] {
    const t = this.now();
    const out: string[] = [];
    for (const remote of remotes) {
      const address = addressGroups(remote)?.address;
      if (!address || this.isBanned(address)) continue;
      let ids = this.banned.get(address);
      if (!ids) {
        if (this.banned.size >= SWEEP_AT) this.sweep(t);
        this.banned.set(address, (ids = new Map()));
      }
      ids.set(peer, t);
      for (const [id, at] of ids) if (at <= t - this.policy.banMs) ids.delete(id);
      if (ids.size >= this.policy.threshold) {
        this.banned.delete(address);
        this.bans.set(address, t + this.policy.banMs);
        out.push(address);
      }
    }
    return out;
  }

  /** Whether a connection from `remote` (a multiaddr) is refused. */
  denies(remote: string): boolean {
    const address = addressGroups(remote)?.address;
    return address !== undefined && this.isBanned(address);
  }

  /** Addresses banned now, with until when (ms since the epoch). */
  list(): { address: string; until: number }[] {
    return [...this.bans].filter(([a]) => this.isBanned(a)).map(([address, until]) => ({ address, until }));
  }

  private isBanned(address: string): boolean {
    const until = this.bans.get(address);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.bans.delete(address);
    return false;
  }

  private sweep(t: number): void {
    for (const [address, ids] of this.banned) {
      for (const [id, at] of ids) if (at <= t - this.policy.banMs) ids.delete(id);
      if (ids.size === 0) this.banned.delete(address);
    }
  }
}
