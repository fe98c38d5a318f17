/**
 * Direct upgrades (DCUtR, issue #24; the reference's `directUpgrades` in network status,
 * admin-wire-a §2): a peer first reached through a relay, and whether a direct connection to it
 * followed. `@libp2p/dcutr` runs the hole punch and says nothing about it, so this tracker reads
 * the connections: a relayed connection to a peer opens an attempt; a direct connection to that
 * peer while the attempt is open is a success; the relayed connection closing with no direct one
 * within a grace period after, or no direct connection within the window, is a failure. One row
 * per peer, the newest attempt; counts since start.
 *
 * Why the grace period: the side that completes the upgrade closes the relayed connection as soon as
 * its own direct connection is up, and its peer can see that close before its end of the direct
 * connection finishes the handshake (the NAT lab: A's `connection:close` for the relayed one came
 * before its `connection:open` for the direct one). Counting the close as a failure at once would
 * call a success a failure on one of the two sides.
 */
export type UpgradeStatus = 'pending' | 'succeeded' | 'failed';

export interface UpgradeRow {
  peerId: string;
  status: UpgradeStatus;
  reason: string | null;
  connectionId: string | null;
  /** ms since the epoch */
  lastAttempt: number;
}

/** how long after a relayed connection opens a direct one still counts as its upgrade */
export const UPGRADE_WINDOW_MS = 60_000;
/** how long after the relayed connection closed a direct one still counts as the upgrade */
export const UPGRADE_GRACE_MS = 5_000;
const MAX_ROWS = 256;

export class DirectUpgrades {
  private readonly rows = new Map<string, UpgradeRow>();
  /** pending attempts whose relayed connection closed: when (they fail once the grace period passes) */
  private readonly closedAt = new Map<string, number>();
  private attemptsCount = 0;
  private successesCount = 0;

  constructor(private readonly now: () => number) {}

  /**
   * A relayed connection to `peerId` opened: an attempt starts unless one is open, or unless a
   * direct connection to the peer is already up (`direct`): a relayed one opened beside it (a dial
   * of a relayed address the peer was known by) has nothing to upgrade.
   */
  relayedOpened(peerId: string, connectionId: string, direct = false): void {
    this.expire();
    if (direct) return;
    const row = this.rows.get(peerId);
    if (row?.status === 'pending') return;
    this.attemptsCount++;
    this.rows.delete(peerId);
    this.closedAt.delete(peerId);
    this.rows.set(peerId, { peerId, status: 'pending', reason: null, connectionId, lastAttempt: this.now() });
    while (this.rows.size > MAX_ROWS) {
      const oldest = this.rows.keys().next().value!;
      this.rows.delete(oldest);
      this.closedAt.delete(oldest);
    }
  }

  /** A direct connection to `peerId` opened: the open attempt succeeded. */
  directOpened(peerId: string, connectionId: string): void {
    this.expire();
    const row = this.rows.get(peerId);
    if (row?.status !== 'pending') return;
    this.successesCount++;
    this.closedAt.delete(peerId);
    this.rows.set(peerId, { ...row, status: 'succeeded', connectionId });
  }

  /** The relayed connection closed: an attempt still open fails unless a direct connection follows within the grace period. */
  relayedClosed(peerId: string): void {
    if (this.rows.get(peerId)?.status === 'pending' && !this.closedAt.has(peerId)) this.closedAt.set(peerId, this.now());
  }

  list(): UpgradeRow[] {
    this.expire();
    return [...this.rows.values()];
  }

  counts(): { attempts: number; successes: number } {
    return { attempts: this.attemptsCount, successes: this.successesCount };
  }

  private expire(): void {
    const now = this.now();
    for (const [peer, closed] of this.closedAt) {
      const row = this.rows.get(peer);
      if (row?.status === 'pending' && now - closed <= UPGRADE_GRACE_MS) continue;
      this.closedAt.delete(peer);
      if (row?.status === 'pending') this.rows.set(peer, { ...row, status: 'failed', reason: 'the relayed connection closed and no direct one opened' });
    }
    for (const [peer, row] of this.rows) {
      if (row.status === 'pending' && now - row.lastAttempt > UPGRADE_WINDOW_MS) {
        this.rows.set(peer, { ...row, status: 'failed', reason: `no direct connection within ${UPGRADE_WINDOW_MS / 1000} s` });
      }
    }
  }
}
