/**
 * Alias logic (admin spec "Aliases"; admin-wire-a §6): names for context, application and device
 * ids, node-global per scope. Create refuses an existing alias (409, as the reference); lookup and
 * delete of an absent alias are not errors (lookup answers no value, delete is idempotent), because
 * clients check "lookup after delete" for a falsy value rather than a 404 (admin-wire-a §0.1 item 9).
 * The target id is not checked for existence, as in the reference: an alias may name a context
 * this node has not joined yet.
 */
import { Serial } from '../serial.ts';
import { parseId } from '../crypto/ids.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import type { Store } from '../store/store.ts';
import { AliasStore, type AliasScope } from './store.ts';

export const ALIAS_SCOPES: readonly AliasScope[] = ['context', 'application', 'device'];

/** The reference's alias grammar (admin-wire-a §6.1): 1–50 ASCII characters. */
export const ALIAS_MAX_LENGTH = 50;
const ALIAS_CHARS = /^[A-Za-z0-9._-]*$/;

/** The request field that carries the target id in each scope's create form. */
export const VALUE_FIELD: Record<AliasScope, 'contextId' | 'applicationId' | 'deviceId'> = {
  context: 'contextId',
  application: 'applicationId',
  device: 'deviceId',
};

/**
 * The scope named in a path, or 404. `identity` is refused like any unknown scope: the reference
 * removed it (core #3441) and the spec answers every alias route naming `identity` with 404.
 */
export function parseScope(scope: string): AliasScope {
  if ((ALIAS_SCOPES as readonly string[]).includes(scope)) return scope as AliasScope;
  throw notFound(`Unknown alias scope '${scope}': expected one of ${ALIAS_SCOPES.join(', ')}`);
}

/** Checks an alias against the grammar; 400 saying which rule it breaks. */
export function validateAlias(name: string): string {
  if (name.length === 0) throw badRequest('Invalid alias: must not be empty');
  if (name.length > ALIAS_MAX_LENGTH) {
    throw badRequest(`Invalid alias: exceeds maximum length of ${ALIAS_MAX_LENGTH} characters (got ${name.length})`);
  }
  if (!ALIAS_CHARS.test(name)) {
    throw badRequest(`Invalid alias '${name}': only ASCII letters, digits, '.', '_' and '-' are allowed`);
  }
  return name;
}

/**
 * The target id in its wire form, 64 lowercase hex. Hex in any case is accepted, and base58 of
 * 32 bytes from older clients (reference README "Id encodings"); anything else is 400 naming the field.
 */
export function parseTargetId(raw: string, field: string): string {
  const id = parseId(raw);
  if (!id) throw badRequest(`Invalid ${field}: expected 64 hex characters (32 bytes)`);
  return id;
}

export class AliasService {
  private readonly aliases: AliasStore;
  // Create is read-then-write; serialising it keeps two concurrent creates of one alias from both
  // succeeding (one gets the 409).
  private readonly serial = new Serial();

  constructor(deps: { store: Store }) {
    this.aliases = new AliasStore(deps.store);
  }

  /** Creates `name → value` in `scope`; 409 when the alias exists (its value is kept). */
  async create(scope: AliasScope, name: string, value: string): Promise<void> {
    validateAlias(name);
    const id = parseTargetId(value, VALUE_FIELD[scope]);
    await this.serial.run(async () => {
      if (await this.aliases.get(scope, name)) throw conflict('alias already exists');
      await this.aliases.put(scope, name, { value: id });
    });
  }

  /** The id an alias names, or null when there is no such alias. */
  async lookup(scope: AliasScope, name: string): Promise<string | null> {
    validateAlias(name);
    return (await this.aliases.get(scope, name))?.value ?? null;
  }

  /** Removes an alias; removing an absent one succeeds too (idempotent, as the reference). */
  async delete(scope: AliasScope, name: string): Promise<void> {
    validateAlias(name);
    // Through the same queue as create, so a delete never lands between a create's check and write.
    await this.serial.run(() => this.aliases.del(scope, name));
  }

  /** Every alias of a scope as a plain `{alias: id}` map, in alias order. */
  async list(scope: AliasScope): Promise<Record<string, string>> {
    // A null-prototype object: an alias such as `__proto__` (valid grammar) stays an own key.
    const out: Record<string, string> = Object.create(null);
    for await (const [name, record] of this.aliases.list(scope)) out[name] = record.value;
    return out;
  }
}
