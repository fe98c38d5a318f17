/**
 * Persistence of root keys, client keys and consumed refresh-token ids (auth-wire §7), over the
 * node store. A key record and its username index change in one batch. A username may name several
 * root keys (one per password, auth-wire §3.2), so the index holds a list of key ids.
 */
import { collect, type Store } from '../store/store.ts';

export type KeyType = 'root' | 'client';

export interface KeyRecord {
  id: string;
  type: KeyType;
  /** root keys: the public key string given at creation (the username for provisioned admins) */
  publicKey: string | null;
  authMethod: string | null;
  /** user_password root keys: login name and scrypt hash */
  username?: string;
  passwordHash?: string;
  /** client keys: the root key they were issued under, their display name and binding */
  rootKeyId: string | null;
  name: string | null;
  applicationId?: string;
  permissions: string[];
  nodeUrl?: string;
  /** Unix seconds */
  createdAt: number;
  revokedAt: number | null;
  expiresAt: number | null;
  /**
   * a sign-in session's client key (the login page's): `expiresAt` slides to `secs` after each mint
   * and refresh, never past `endsAt` (its `ttl_secs` lifetime), so an unused one expires
   */
  idle?: { secs: number; endsAt: number };
  /** tokens carrying an older generation are revoked (refresh-token reuse) */
  generation: number;
  /** the node owner's key: the admin provisioned first (docs/security.md "Who may change a root key") */
  owner?: boolean;
}

/**
 * Who owns the node (issue #37 item 2): a username, not a key, so the owner may hold several
 * passwords. It changes only by provisioning, by `hearth key transfer-owner` and, once, by adopting
 * the owner of a home from before this record; never by falling back to another admin.
 */
export interface OwnerRecord {
  username: string;
  /** Unix seconds: since when this username owns the node */
  since: number;
  how: OwnerChange;
  /** earlier owners, oldest first */
  history: { username: string; since: number; until: number; how: OwnerChange }[];
}

export type OwnerChange = 'provisioned' | 'adopted' | 'transferred';

export interface ConsumedJti {
  exp: number;
  reason: 'refresh' | 'logout';
}

export function isValidKey(k: KeyRecord, nowSecs: number): boolean {
  return k.revokedAt === null && (k.expiresAt === null || k.expiresAt > nowSecs);
}

/** keys kept in memory; beyond it the oldest cached record is dropped (and re-read when needed) */
const KEY_CACHE_SIZE = 10_000;

export class KeyStore {
  private readonly keys;
  private readonly users;
  private readonly jtis;
  private readonly owners;

  constructor(private readonly store: Store) {
    this.keys = store.space<KeyRecord>('auth.keys');
    // older homes stored one id per username; both forms are read
    this.users = store.space<string | string[]>('auth.users');
    this.jtis = store.space<ConsumedJti>('auth.jti');
    this.owners = store.space<OwnerRecord>('auth.owner');
  }

  /** The node's owner; undefined before provisioning (or in a home from before the record, until adopted). */
  owner(): Promise<OwnerRecord | undefined> {
    return this.owners.get('node');
  }

  /** Records a new owner (one synced write), keeping the previous one in the history. */
  async setOwner(username: string, how: OwnerChange, nowSecs: number): Promise<OwnerRecord> {
    const prev = await this.owner();
    const history = prev ? [...prev.history, { username: prev.username, since: prev.since, until: nowSecs, how: prev.how }] : [];
    const next: OwnerRecord = { username, since: nowSecs, how, history: history.slice(-100) };
    await this.store.batch([this.owners.putOp('node', next)]);
    return next;
  }

  /**
   * Every guarded request reads its key: records are cached (write-through: every key write goes
   * through this class) and frozen, so a caller cannot change a cached record without a `put`.
   */
  private readonly cache = new Map<string, Readonly<KeyRecord>>();
  /** bumped by every key write: a read that raced a write must not cache what it read */
  private writes = 0;

  async get(id: string): Promise<KeyRecord | undefined> {
    const hit = this.cache.get(id);
    if (hit) return hit;
    const before = this.writes;
    const key = await this.keys.get(id);
    if (key && this.writes === before) this.remember(key);
    return key;
  }

  /**
   * The cached record of a key, without reading the store; undefined when it is not cached (which
   * says nothing about whether the key exists). A write drops the record before it reaches the
   * store and caches the new one once written, so this never answers a record older than the last
   * completed write.
   */
  cached(id: string): KeyRecord | undefined {
    return this.cache.get(id);
  }

  /** The root keys of a username, oldest first (each has its own password). */
  async byUsername(username: string): Promise<KeyRecord[]> {
    const keys = await Promise.all((await this.idsOf(username)).map((id) => this.get(id)));
    return keys.filter((k): k is KeyRecord => k !== undefined);
  }

  private async idsOf(username: string): Promise<string[]> {
    const ids = await this.users.get(username);
    return ids === undefined ? [] : typeof ids === 'string' ? [ids] : ids;
  }

  /** Writes a key (and adds it to its username's index). Callers serialise writes of one username. */
  async put(key: KeyRecord): Promise<void> {
    const ops = [this.keys.putOp(key.id, key)];
    if (key.username !== undefined) {
      const ids = await this.idsOf(key.username);
      if (!ids.includes(key.id)) ops.push(this.users.putOp(key.username, [...ids, key.id]) as never);
    }
    this.writes++;
    this.cache.delete(key.id);
    await this.store.batch(ops);
    this.writes++; // reads that overlapped the batch may have seen either value: none of them caches
    this.remember(key);
  }

  private remember(key: KeyRecord): void {
    if (this.cache.size >= KEY_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key.id, Object.freeze({ ...key, permissions: Object.freeze([...key.permissions]) as string[] }));
  }

  async list(type: KeyType): Promise<KeyRecord[]> {
    return (await collect(this.keys.entries())).map(([, k]) => k).filter((k) => k.type === type);
  }

  consumed(jti: string): Promise<ConsumedJti | undefined> {
    return this.jtis.get(jti);
  }

  /** Marks a refresh token used; with `key`, the key change lands in the same batch. */
  async consume(jti: string, entry: ConsumedJti, key?: KeyRecord): Promise<void> {
    const ops = [this.jtis.putOp(jti, entry)] as Parameters<Store['batch']>[0];
    if (key) {
      ops.push(this.keys.putOp(key.id, key));
      this.writes++;
      this.cache.delete(key.id);
    }
    await this.store.batch(ops);
    if (key) {
      this.writes++;
      this.remember(key);
    }
  }

  /** Drops consumed ids whose token has expired anyway: a replay of those fails on expiry. */
  async sweep(nowSecs: number): Promise<number> {
    const stale = (await collect(this.jtis.entries())).filter(([, v]) => v.exp < nowSecs - 3600);
    await this.store.batch(stale.map(([k]) => this.jtis.delOp(k)));
    return stale.length;
  }
}
