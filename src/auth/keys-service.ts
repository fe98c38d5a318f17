/**
 * Root-key and client-key administration (auth spec "Endpoints" rows under /admin; auth-wire
 * §2.6–§2.14, §3.3, §11): creation, listing, permission deltas, revocation, client-key minting with
 * the rc.83 grant restrictions and lifetimes, and admin provisioning at start-up.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { unixSecs, type Clock } from '../clock.ts';
import type { AuthConfig } from '../config/config.ts';
import { parseId } from '../crypto/ids.ts';
import { badRequest, conflict, forbidden, notFound } from '../errors.ts';
import { bindingOf, isBound } from './binding.ts';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.ts';
import { formatPermission, holdsAdmin, parseGrants, parsePermission, satisfies, type Permission } from './permissions.ts';
import { identifierOnly, printableAscii } from './sanitize.ts';
import type { AuthService, Principal } from './service.ts';
import { isValidKey, type KeyRecord, type KeyStore, type OwnerRecord } from './store.ts';
import type { TokenPair } from './tokens.ts';
import { nodeUrlProblem } from './urls.ts';

export interface CreateRootKeyInput {
  public_key: string;
  auth_method: string;
  provider_data: unknown;
  target_node_url?: string;
}

export interface ClientKeyInput {
  context_id?: string;
  context_identity?: string;
  permissions?: string[];
  target_node_url?: string;
  application_id?: string;
  ttl_secs?: number;
}

/** Longest client-key lifetime accepted (decision: docs/decisions.md, "client key lifetime"). */
export const MAX_CLIENT_KEY_TTL_SECS = 365 * 24 * 3600;

const hasAdmin = (k: KeyRecord) => holdsAdmin(k.permissions);

/**
 * An optional id field of a request (issue #17 finding 3): absent or empty means "not given";
 * anything else is 64 hex characters (or base58 of 32 bytes, README "Id encodings") or a 400
 * naming the field. Never sanitised into something else.
 */
export function optionalIdField(value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  const id = parseId(value);
  if (!id) throw badRequest(`Invalid ${field}: expected 64 hex characters (32 bytes)`);
  return id;
}

/** Key ids are 64 hex (root), UUIDs (client) or `mock_<name>_<secs>`: refused, not cleaned, when anything else. */
function keyIdField(value: string, field: string): string {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(value)) throw badRequest(`Invalid ${field}: a key id is 1-128 characters of [A-Za-z0-9_-]`);
  return value;
}

export class KeysService {
  constructor(
    private readonly d: { keys: KeyStore; clock: Clock; config: AuthConfig; auth: AuthService },
  ) {}

  private now(): number {
    return unixSecs(this.d.clock);
  }

  async hasUserPasswordAdmin(): Promise<boolean> {
    const now = this.now();
    return (await this.d.keys.list('root')).some((k) => k.authMethod === 'user_password' && isValidKey(k, now));
  }

  /**
   * Creates the admin account when the node has none (auth-wire §3.3); a no-op otherwise. Its
   * username becomes the node's owner (issue #37 item 2): provisioning is the operator's act, so it
   * may re-create a username whose keys were revoked, and it records who owned the node before.
   */
  async provisionAdmin(username: string, password: string): Promise<boolean> {
    if (await this.hasUserPasswordAdmin()) return false;
    await this.createRootKey({ public_key: username, auth_method: 'user_password', provider_data: { username, password } }, undefined, { owner: true });
    return true;
  }

  /** The node's owner (a username), as recorded; nothing else ever stands in for it. */
  async owner(): Promise<OwnerRecord | undefined> {
    return this.d.keys.owner();
  }

  /**
   * A home from before the owner record (issue #37 item 2) adopts, once, the owner the node saw
   * then: the key provisioned as the owner, or the oldest valid user_password root key holding
   * `admin`. Written at start, so ownership never moves by falling back afterwards. Answers the
   * adopted username when it adopted one.
   */
  async adoptOwner(): Promise<string | undefined> {
    return this.d.auth.serial.run(async () => {
      if (await this.d.keys.owner()) return undefined;
      const now = this.now();
      const roots = (await this.d.keys.list('root')).filter((k) => isValidKey(k, now) && k.username !== undefined);
      const marked = roots.find((k) => k.owner === true);
      const oldest = roots.filter((k) => k.authMethod === 'user_password' && hasAdmin(k)).sort((a, b) => a.createdAt - b.createdAt)[0];
      const username = (marked ?? oldest)?.username;
      if (username === undefined) return undefined;
      await this.d.keys.setOwner(username, 'adopted', now);
      return username;
    });
  }

  /**
   * Hands the node to another user (`hearth key transfer-owner`, run by the operator on the
   * node's home): that user needs an active user_password root key holding `admin`. The previous
   * owner's keys stay, as any admin's. Answers both usernames; the caller logs the change.
   */
  async transferOwner(username: string): Promise<{ from: string | null; to: string; at: number }> {
    return this.d.auth.serial.run(async () => {
      const now = this.now();
      const keys = (await this.d.keys.byUsername(username)).filter((k) => isValidKey(k, now) && k.authMethod === 'user_password');
      if (!keys.some(hasAdmin)) throw conflict(`User ${username} has no active root key holding admin: it cannot own the node`);
      const prev = await this.d.keys.owner();
      if (prev?.username !== username) await this.d.keys.setOwner(username, 'transferred', now);
      return { from: prev?.username ?? null, to: username, at: now };
    });
  }

  /** Whether `caller` speaks for the node's owner: a root key of the owner's username (never a client key). */
  private async isOwner(caller: Principal, owner: OwnerRecord | undefined): Promise<boolean> {
    if (!owner || caller.keyType !== 'root') return false;
    return (await this.d.keys.get(caller.keyId))?.username === owner.username;
  }

  /**
   * Whether `caller` may revoke, edit or replace the root key `target` (issue #23 section 2, issue
   * #37 item 2; docs/security.md "Who may change a root key"). Throws 403 `permission_denied`
   * naming the rule.
   * - A key may always act on itself.
   * - The owner's keys (every root key of the owner's username) are changed only by the owner:
   *   another admin could otherwise revoke them and become the owner's equal or its replacement.
   * - A client key never acts on the root key it descends from, on a root key holding `admin` (a
   *   root key's `admin` also mints keys, which no client key can), or on a root key holding
   *   anything the client key does not.
   * - A root key never acts on a root key holding anything it does not hold.
   */
  private async mayChangeRoot(caller: Principal, target: KeyRecord, what: string): Promise<void> {
    if (target.type !== 'root' || target.id === caller.keyId) return;
    const deny = (why: string) => forbidden(`This key may not ${what} root key ${target.id}: ${why}`, 'permission_denied');
    const owner = await this.d.keys.owner();
    if (owner && target.username === owner.username && !(await this.isOwner(caller, owner))) {
      throw deny("it is the node owner's, which only the owner changes (ownership moves by `hearth key transfer-owner`)");
    }
    if (caller.keyType === 'client') {
      if (target.id === caller.rootKeyId) throw deny('a client key never changes the root key it was issued under');
      if (hasAdmin(target)) throw deny('it holds admin, which is more authority than a client key has');
    }
    const beyond = target.permissions.filter((p) => !satisfies(caller.permissions, p));
    if (beyond.length > 0) throw deny(`it holds ${beyond.join(', ')}, which this key does not`);
  }

  /**
   * The owner keeps an admin key: a change that would leave the owner's username without an active
   * root key holding `admin` is refused (409), so the node never drifts into having no owner who
   * can act. Checked after the last-admin rule.
   */
  private async keepsOwnerAdmin(target: KeyRecord): Promise<void> {
    const owner = await this.d.keys.owner();
    if (!owner || target.type !== 'root' || target.username !== owner.username || !hasAdmin(target)) return;
    const others = (await this.activeAdminRoots()).filter((k) => k.id !== target.id && k.username === owner.username);
    if (others.length === 0) throw conflict("Cannot take admin from the owner's last admin key: transfer ownership first (hearth key transfer-owner)");
  }

  /**
   * A credential for a username the node knows — active, or with every key revoked — needs that
   * user's own authority (a root key of the same username) or the owner's: never another admin's,
   * nor any client key's. A revoked username stays its user's; only the owner or provisioning
   * (no caller) re-creates it.
   */
  private async mayAddCredential(caller: Principal | undefined, username: string, existing: KeyRecord[]): Promise<void> {
    if (!caller || existing.length === 0) return;
    if (caller.keyType === 'root') {
      if ((await this.d.keys.get(caller.keyId))?.username === username) return;
      if (await this.isOwner(caller, await this.d.keys.owner())) return;
    }
    const now = this.now();
    if (existing.some((k) => isValidKey(k, now))) {
      throw forbidden(`Only user ${username} (or the node owner) may add a credential for ${username}`, 'permission_denied');
    }
    throw forbidden(`User ${username} exists (its keys were revoked): only the node owner may re-create it`, 'permission_denied');
  }

  async listRootKeys(): Promise<KeyRecord[]> {
    // active keys first: clients read element 0 and ask for its permissions (auth-wire §2.10)
    const now = this.now();
    const all = await this.d.keys.list('root');
    return [...all.filter((k) => isValidKey(k, now)), ...all.filter((k) => !isValidKey(k, now))];
  }

  /**
   * `POST /admin/keys`. A root key is named by its username *and* password (auth-wire §2.8, §3.2):
   * a new password for a known username makes a second key and never changes the first, so a
   * holder of `admin` cannot take another user's account over by re-posting its username. The same
   * username and password again answers "Key was updated" and changes nothing (the reference's
   * overwrite would reset a narrowed key to `admin` and revive a revoked one).
   */
  async createRootKey(input: CreateRootKeyInput, caller?: Principal, opts: { owner?: boolean } = {}): Promise<{ status: boolean; message: string }> {
    // a root key never expires: one made by a client key would outlive it (finding 4)
    if (caller && caller.keyType !== 'root') throw forbidden('Client keys cannot create root keys: log in with a root key');
    const method = identifierOnly(input.auth_method ?? '');
    if (method !== 'user_password') throw badRequest(`Provider not found: ${method || '(empty)'}; supported: user_password`);
    const pd = (input.provider_data ?? {}) as Record<string, unknown>;
    if (typeof pd.username !== 'string' || !pd.username) throw badRequest("Missing or invalid 'username' in provider data");
    if (pd.username.length > 256) throw badRequest("Invalid 'username' in provider data: at most 256 characters");
    if (typeof pd.password !== 'string') throw badRequest("Missing or invalid 'password' in provider data");
    const problem = passwordProblem(pd.password);
    if (problem) throw badRequest(problem);
    const urlProblem = nodeUrlProblem(input.target_node_url, 'target_node_url');
    if (urlProblem) throw badRequest(urlProblem);
    const username = pd.username;
    const password = pd.password;
    const passwordHash = await hashPassword(password);
    return this.d.auth.serial.run(async () => {
      const now = this.now();
      const existingKeys = await this.d.keys.byUsername(username);
      // before any password comparison: "Key was updated" would otherwise tell anyone whether a password is right
      await this.mayAddCredential(caller, username, existingKeys);
      for (const existing of existingKeys) {
        if (isValidKey(existing, now) && existing.passwordHash && (await verifyPassword(password, existing.passwordHash))) {
          return { status: true, message: 'Key was updated' };
        }
      }
      const key: KeyRecord = {
        id: randomBytes(32).toString('hex'),
        type: 'root',
        publicKey: printableAscii(input.public_key ?? '').slice(0, 256) || username,
        authMethod: method,
        username,
        passwordHash,
        rootKeyId: null,
        name: null,
        permissions: ['admin'],
        nodeUrl: input.target_node_url || undefined,
        createdAt: now,
        revokedAt: null,
        expiresAt: null,
        generation: 0,
        ...(opts.owner ? { owner: true } : {}),
      };
      await this.d.keys.put(key);
      if (opts.owner && (await this.d.keys.owner())?.username !== username) await this.d.keys.setOwner(username, 'provisioned', now);
      return { status: true, message: 'Key was created' };
    });
  }

  private async activeAdminRoots(): Promise<KeyRecord[]> {
    const now = this.now();
    return (await this.d.keys.list('root')).filter((k) => isValidKey(k, now) && hasAdmin(k));
  }

  /**
   * `DELETE /admin/keys/{id}`. The last active admin key is refused as `POST /admin/revoke` refuses
   * it: 409 (issue #23 section 2; the reference answers 200 `status: false`).
   */
  async deleteRootKey(caller: Principal, id: string): Promise<{ key_id: string; revoked_at: number }> {
    return this.d.auth.serial.run(async () => {
      const key = await this.validKey(id);
      if (key?.type === 'client') throw badRequest('Not a root key');
      if (!key) throw notFound('Root key not found');
      await this.mayChangeRoot(caller, key, 'revoke');
      if (hasAdmin(key) && (await this.activeAdminRoots()).length <= 1) throw conflict('Cannot revoke the last active admin key');
      await this.keepsOwnerAdmin(key);
      const revoked = { ...key, revokedAt: this.now() };
      await this.d.keys.put(revoked);
      return { key_id: key.id, revoked_at: revoked.revokedAt };
    });
  }

  /** `POST /admin/revoke`: any key id; a key may always revoke itself (logout step b). */
  async revoke(caller: Principal, rawId: string): Promise<void> {
    const id = keyIdField(rawId, 'client_id');
    if (id !== caller.keyId && !satisfies(caller.permissions, 'keys:delete')) {
      throw forbidden('Revoking another key needs the keys:delete permission', 'permission_denied');
    }
    await this.d.auth.serial.run(async () => {
      const key = await this.validKey(id);
      if (!key) throw notFound('Failed to revoke tokens: Key not found');
      await this.mayChangeRoot(caller, key, 'revoke');
      if (key.type === 'root' && hasAdmin(key) && (await this.activeAdminRoots()).length <= 1) {
        throw conflict('Cannot revoke the last active admin key');
      }
      await this.keepsOwnerAdmin(key);
      await this.d.keys.put({ ...key, revokedAt: this.now() });
    });
  }

  async getPermissions(id: string): Promise<string[]> {
    const key = await this.validKey(id);
    if (!key) throw notFound('Key not found');
    return key.permissions;
  }

  /**
   * `PUT /admin/keys/{id}/permissions`: additions are parsed (400 for anything that is not a
   * permission) and stored canonically; removals match a held permission by structure, so any
   * spelling of a held permission removes it.
   */
  async updatePermissions(caller: Principal, id: string, add: string[], remove: string[]): Promise<string[]> {
    const adds = parseGrants(add, 'add').map(formatPermission);
    const removes = new Set(remove.map((s) => parsePermission(s)).map((p, i) => (p ? formatPermission(p) : remove[i])));
    if (adds.some((p) => !satisfies(caller.permissions, p))) throw forbidden('Cannot grant permissions that exceed your own');
    return this.d.auth.serial.run(async () => {
      const key = await this.validKey(id);
      if (!key) throw notFound('Key not found');
      await this.mayChangeRoot(caller, key, 'edit');
      const canonical = (s: string) => {
        const p = parsePermission(s);
        return p ? formatPermission(p) : s;
      };
      const next = key.permissions.filter((p) => !removes.has(p) && !removes.has(canonical(p)));
      for (const p of adds) if (!next.some((q) => canonical(q) === p)) next.push(p);
      if (next.length === 0) throw badRequest('Key must have at least one permission');
      if (key.type === 'client') {
        await this.checkClientGrant(key.rootKeyId ?? '', parseGrants(next, 'permissions'), isBound(bindingOf(next)), key.applicationId);
      }
      if (key.type === 'root' && hasAdmin(key) && !holdsAdmin(next) && (await this.activeAdminRoots()).length <= 1) {
        throw conflict('Cannot remove admin from the last active admin key');
      }
      if (!holdsAdmin(next)) await this.keepsOwnerAdmin(key);
      await this.d.keys.put({ ...key, permissions: next });
      return next;
    });
  }

  /** Client keys; `isValid` is false when the key or the root key it was issued under is revoked or expired. */
  async listClientKeys(): Promise<(KeyRecord & { isValid: boolean })[]> {
    const now = this.now();
    const roots = new Map((await this.d.keys.list('root')).map((r) => [r.id, r]));
    return (await this.d.keys.list('client')).map((k) => {
      const root = roots.get(k.rootKeyId ?? '');
      return { ...k, isValid: isValidKey(k, now) && root !== undefined && isValidKey(root, now) };
    });
  }

  /**
   * `POST /admin/client-key` (auth spec rc.83 grant rules). Only a root key mints client keys: a
   * client key is a leaf, so nothing derived from it can outlive it or escape its revocation. The
   * new key never outlives its root key, and holds only what the root holds (checked again on every
   * request, so a later narrowing or revocation of the root reaches it). A sign-in session's key
   * (`signIn`: the login page's, hearth's `X-Hearth-Session: sign-in`) also expires when unused
   * for `sign_in_key_idle_secs` (AuthService.refresh slides it).
   */
  async createClientKey(caller: Principal, input: ClientKeyInput, opts: { signIn?: boolean } = {}): Promise<{ pair: TokenPair; clientId: string }> {
    if (!holdsAdmin(caller.permissions)) throw forbidden('Token does not have admin permissions');
    if (caller.keyType !== 'root') throw forbidden('Client keys cannot mint client keys: log in with a root key');
    const ttl = input.ttl_secs ?? this.d.config.clientKeyDefaultTtlSecs;
    if (!Number.isInteger(ttl) || ttl <= 0) throw badRequest('ttl_secs must be a positive number of seconds');
    if (ttl > MAX_CLIENT_KEY_TTL_SECS) throw badRequest(`ttl_secs must be at most ${MAX_CLIENT_KEY_TTL_SECS} (one year)`);
    const contextId = optionalIdField(input.context_id, 'context_id');
    const identity = optionalIdField(input.context_identity, 'context_identity');
    const applicationId = optionalIdField(input.application_id, 'application_id');
    if (identity && !contextId) throw badRequest('Invalid context_identity: it names an identity within context_id, which is missing');
    const urlProblem = nodeUrlProblem(input.target_node_url, 'target_node_url');
    if (urlProblem) throw badRequest(urlProblem);
    const requested = parseGrants(input.permissions ?? [], 'permissions');
    const permissions: string[] = [];
    if (contextId) permissions.push(identity ? `context[${contextId},${identity}]` : `context[${contextId}]`);
    for (const p of requested.map(formatPermission)) if (!permissions.includes(p)) permissions.push(p);
    if (permissions.length === 0) throw badRequest('A client key needs at least one permission or a context');
    const root = await this.validKey(caller.rootKeyId);
    if (!root) throw notFound('Root key not found');
    await this.checkClientGrant(root.id, parseGrants(permissions, 'permissions'), isBound(bindingOf(permissions)), applicationId);
    const now = this.now();
    const key: KeyRecord = {
      id: randomUUID(),
      type: 'client',
      publicKey: null,
      authMethod: null,
      rootKeyId: root.id,
      name: clientKeyName(contextId ?? '', identity ?? '', applicationId, permissions),
      applicationId,
      permissions,
      nodeUrl: input.target_node_url || undefined,
      createdAt: now,
      revokedAt: null,
      expiresAt: root.expiresAt === null ? now + ttl : Math.min(now + ttl, root.expiresAt),
      generation: 0,
    };
    if (opts.signIn) {
      const endsAt = key.expiresAt!;
      key.idle = { secs: this.d.config.signInKeyIdleSecs, endsAt };
      key.expiresAt = Math.min(endsAt, now + key.idle.secs);
    }
    await this.d.keys.put(key);
    return { pair: await this.d.auth.mintFor(key, key.nodeUrl), clientId: key.id };
  }

  /** The rc.83 grant rules (auth spec "Authentication"), on parsed permissions; every refusal is a 400. */
  private async checkClientGrant(rootId: string, permissions: Permission[], bound: boolean, applicationId?: string): Promise<void> {
    const root = await this.validKey(rootId);
    if (!root) throw notFound('Root key not found');
    for (const p of permissions) {
      const text = formatPermission(p);
      if (p.category === 'keys') throw badRequest(`Permission ${text} is never grantable to a client key`);
      if (p.category === 'admin' && (bound || applicationId)) throw badRequest('Permission admin is grantable only to a key bound to no context');
      if (!satisfies(root.permissions, text)) throw badRequest(`Root key does not have permission: ${text}`);
    }
  }

  async deleteClientKey(rootId: string, clientId: string): Promise<{ message: string; revoked_at: number }> {
    return this.d.auth.serial.run(async () => {
      const key = await this.validKey(clientId);
      if (!key || key.type !== 'client') throw notFound('Client key not found');
      if (key.rootKeyId !== rootId) throw badRequest('Client key does not belong to specified root key');
      const revokedAt = this.now();
      await this.d.keys.put({ ...key, revokedAt });
      return { message: 'Client key revoked successfully', revoked_at: revokedAt };
    });
  }

  /** Lookups hide revoked and expired keys, as the reference's do (auth-wire §7). */
  private async validKey(id: string): Promise<KeyRecord | undefined> {
    const key = await this.d.keys.get(id);
    return key && isValidKey(key, this.now()) ? key : undefined;
  }
}

/**
 * A client key's name. The reference writes `Context Client - <context> (<identity>)` whatever the
 * key is bound to, so an unbound key reads `Context Client -  ()` (auth-wire §2.13); ours keeps that
 * form for context keys and names the others by what they may do (issue #16).
 */
export function clientKeyName(contextId: string, identity: string, applicationId: string | undefined, permissions: string[]): string {
  if (contextId) return identity ? `Context Client - ${contextId} (${identity})` : `Context Client - ${contextId}`;
  if (applicationId) return `Application Client - ${applicationId}`;
  return `Client - ${permissions.join(', ')}`;
}

function isBoundPermissions(perms: string[]): boolean {
  return perms.some((p) => /^(context|group)\[/.test(p));
}
