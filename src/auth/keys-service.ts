/**
 * Root-key and client-key administration (auth spec "Endpoints" rows under /admin; auth-wire
 * §2.6–§2.14, §3.3, §11): creation, listing, permission deltas, revocation, client-key minting with
 * the rc.83 grant restrictions and lifetimes, and admin provisioning at start-up.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { unixSecs, type Clock } from '../clock.ts';
import type { AuthConfig } from '../config/config.ts';
import { badRequest, conflict, forbidden, notFound, type HearthError } from '../errors.ts';
import { hashPassword, passwordProblem } from './passwords.ts';
import { isValidPermission, satisfies } from './permissions.ts';
import { identifierOnly, normaliseId, printableAscii } from './sanitize.ts';
import type { AuthService, Principal } from './service.ts';
import { isValidKey, type KeyRecord, type KeyStore } from './store.ts';
import type { TokenPair } from './tokens.ts';

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

const hasAdmin = (k: KeyRecord) => k.permissions.includes('admin');

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

  /** Creates the admin account when the node has none (auth-wire §3.3); a no-op otherwise. */
  async provisionAdmin(username: string, password: string): Promise<boolean> {
    if (await this.hasUserPasswordAdmin()) return false;
    await this.createRootKey({ public_key: username, auth_method: 'user_password', provider_data: { username, password } });
    return true;
  }

  async listRootKeys(): Promise<KeyRecord[]> {
    // active keys first: clients read element 0 and ask for its permissions (auth-wire §2.10)
    const now = this.now();
    const all = await this.d.keys.list('root');
    return [...all.filter((k) => isValidKey(k, now)), ...all.filter((k) => !isValidKey(k, now))];
  }

  async createRootKey(input: CreateRootKeyInput): Promise<{ status: boolean; message: string }> {
    const method = identifierOnly(input.auth_method ?? '');
    if (method !== 'user_password') throw badRequest(`Provider not found: ${method || '(empty)'}; supported: user_password`);
    const pd = (input.provider_data ?? {}) as Record<string, unknown>;
    if (typeof pd.username !== 'string' || !pd.username) throw badRequest("Missing or invalid 'username' in provider data");
    if (typeof pd.password !== 'string') throw badRequest("Missing or invalid 'password' in provider data");
    const problem = passwordProblem(pd.password);
    if (problem) throw badRequest(problem);
    const username = pd.username;
    const passwordHash = await hashPassword(pd.password);
    return this.d.auth.serial.run(async () => {
      const existing = await this.d.keys.byUsername(username);
      const key: KeyRecord = {
        id: existing?.id ?? randomBytes(32).toString('hex'),
        type: 'root',
        publicKey: printableAscii(input.public_key ?? '') || username,
        authMethod: method,
        username,
        passwordHash,
        rootKeyId: null,
        name: null,
        permissions: ['admin'],
        nodeUrl: input.target_node_url || undefined,
        createdAt: this.now(),
        revokedAt: null,
        expiresAt: null,
        generation: existing?.generation ?? 0,
      };
      await this.d.keys.put(key);
      return { status: true, message: existing ? 'Key was updated' : 'Key was created' };
    });
  }

  private async activeAdminRoots(): Promise<KeyRecord[]> {
    const now = this.now();
    return (await this.d.keys.list('root')).filter((k) => isValidKey(k, now) && hasAdmin(k));
  }

  async deleteRootKey(id: string): Promise<{ key_id: string; revoked_at: number } | { status: false; message: string }> {
    return this.d.auth.serial.run(async () => {
      const key = await this.validKey(id);
      if (key?.type === 'client') throw badRequest('Not a root key');
      if (!key) throw notFound('Root key not found');
      const admins = await this.activeAdminRoots();
      if (hasAdmin(key) && admins.length <= 1) return { status: false as const, message: 'Cannot delete the last active admin key' };
      const revoked = { ...key, revokedAt: this.now() };
      await this.d.keys.put(revoked);
      return { key_id: key.id, revoked_at: revoked.revokedAt };
    });
  }

  /** `POST /admin/revoke`: any key id; a key may always revoke itself (logout step b). */
  async revoke(caller: Principal, rawId: string): Promise<void> {
    const id = identifierOnly(rawId);
    if (!id) throw badRequest('Client ID must contain valid characters');
    if (id !== caller.keyId && !satisfies(caller.permissions, 'keys:delete')) {
      throw forbidden('Revoking another key needs the keys:delete permission', 'permission_denied');
    }
    await this.d.auth.serial.run(async () => {
      const key = await this.validKey(id);
      if (!key) throw notFound('Failed to revoke tokens: Key not found');
      if (key.type === 'root' && hasAdmin(key) && (await this.activeAdminRoots()).length <= 1) {
        throw conflict('Cannot revoke the last active admin key');
      }
      await this.d.keys.put({ ...key, revokedAt: this.now() });
    });
  }

  async getPermissions(id: string): Promise<string[]> {
    const key = await this.validKey(id);
    if (!key) throw notFound('Key not found');
    return key.permissions;
  }

  async updatePermissions(caller: Principal, id: string, add: string[], remove: string[]): Promise<string[]> {
    const clean = (list: string[]) => list.map(printableAscii).filter(Boolean);
    const adds = clean(add);
    const removes = clean(remove);
    const bad = adds.find((p) => !isValidPermission(p));
    if (bad !== undefined) throw badRequest(`Invalid permission format: ${bad}`);
    if (adds.some((p) => !satisfies(caller.permissions, p))) throw forbidden('Cannot grant permissions that exceed your own');
    return this.d.auth.serial.run(async () => {
      const key = await this.validKey(id);
      if (!key) throw notFound('Key not found');
      const next = key.permissions.filter((p) => !removes.includes(p));
      for (const p of adds) if (!next.includes(p)) next.push(p);
      if (next.length === 0) throw badRequest('Key must have at least one permission');
      if (key.type === 'client') await this.checkClientGrant(key.rootKeyId ?? '', next, isBoundPermissions(next), key.applicationId);
      if (key.type === 'root' && hasAdmin(key) && !next.includes('admin') && (await this.activeAdminRoots()).length <= 1) {
        throw conflict('Cannot remove admin from the last active admin key');
      }
      await this.d.keys.put({ ...key, permissions: next });
      return next;
    });
  }

  async listClientKeys(): Promise<(KeyRecord & { isValid: boolean })[]> {
    const now = this.now();
    return (await this.d.keys.list('client')).map((k) => ({ ...k, isValid: isValidKey(k, now) }));
  }

  async createClientKey(caller: Principal, input: ClientKeyInput): Promise<{ pair: TokenPair; clientId: string }> {
    if (!caller.permissions.includes('admin')) throw forbidden('Token does not have admin permissions');
    const ttl = input.ttl_secs ?? this.d.config.clientKeyDefaultTtlSecs;
    if (!Number.isInteger(ttl) || ttl <= 0) throw badRequest('ttl_secs must be a positive number of seconds');
    if (ttl > MAX_CLIENT_KEY_TTL_SECS) throw badRequest(`ttl_secs must be at most ${MAX_CLIENT_KEY_TTL_SECS} (one year)`);
    const contextId = normaliseId(identifierOnly(input.context_id ?? ''));
    const identity = normaliseId(identifierOnly(input.context_identity ?? ''));
    const applicationId = normaliseId(identifierOnly(input.application_id ?? '')) || undefined;
    const permissions: string[] = [];
    if (contextId) permissions.push(identity ? `context[${contextId},${identity}]` : `context[${contextId}]`);
    for (const p of input.permissions ?? []) if (!permissions.includes(p)) permissions.push(p);
    if (permissions.length === 0) throw badRequest('A client key needs at least one permission or a context');
    const root = await this.validKey(caller.rootKeyId);
    if (!root) throw notFound('Root key not found');
    await this.checkClientGrant(root.id, permissions, Boolean(contextId), applicationId);
    const now = this.now();
    const key: KeyRecord = {
      id: randomUUID(),
      type: 'client',
      publicKey: null,
      authMethod: null,
      rootKeyId: root.id,
      name: clientKeyName(contextId, identity, applicationId, permissions),
      applicationId,
      permissions,
      nodeUrl: input.target_node_url || undefined,
      createdAt: now,
      revokedAt: null,
      expiresAt: now + ttl,
      generation: 0,
    };
    await this.d.keys.put(key);
    return { pair: await this.d.auth.mintFor(key, key.nodeUrl), clientId: key.id };
  }

  /** The rc.83 grant rules (auth spec "Authentication"); every refusal is a 400. */
  private async checkClientGrant(rootId: string, permissions: string[], bound: boolean, applicationId?: string): Promise<void> {
    const root = await this.validKey(rootId);
    if (!root) throw notFound('Root key not found');
    const refuse = (m: string): HearthError => badRequest(m);
    for (const p of permissions) {
      if (p === 'keys' || p.startsWith('keys:') || p.startsWith('keys[')) throw refuse(`Permission ${p} is never grantable to a client key`);
      if (p === 'admin' && (bound || applicationId)) throw refuse('Permission admin is grantable only to a key bound to no context');
      if (!isValidPermission(p)) throw refuse(`Invalid permission format: ${p}`);
      if (!satisfies(root.permissions, p)) throw refuse(`Root key does not have permission: ${p}`);
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
