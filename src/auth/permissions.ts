/**
 * The permission vocabulary carried in keys and tokens (auth-wire §6): parsing a permission string
 * (§6.1), its canonical form, and whether a held set satisfies a requirement (§6.2). Pure logic;
 * the guard (route-permissions.ts) produces requirements, the key service checks grants with it.
 *
 * Grammar: `category[:action[:sub[:subsub]]][ [p1,p2,p3] ]`. p1 is the resource id (empty = global),
 * p2 a user (context leave/invite/execute only), p3 a method (context execute only). `*` is never a
 * wildcard: `[*]` is the literal id `*`, and `keys:*` / `application:*` do not parse.
 */
import { badRequest } from '../errors.ts';

export type Category = 'admin' | 'application' | 'package' | 'blob' | 'namespace' | 'group' | 'context' | 'keys';

/**
 * A parsed permission. `action` is the canonical action path after the category (`''` for the
 * category's umbrella form, e.g. `list`, `add:stream`, `alias:create:context`, `clients:list`).
 * `scope` null = global; `user` null = any user; `method` null = no method.
 */
export interface Permission {
  category: Category;
  action: string;
  scope: string | null;
  user: string | null;
  method: string | null;
}

const ALIAS_VERBS = ['create', 'list', 'lookup', 'delete'];
// rc.25 alias types (§6.1). `device` is an rc.83 alias scope whose routes the guard leaves to
// `admin` (§5.2), so it is not in the vocabulary.
const ALIAS_TYPES = ['context', 'application', 'identity'];

const ACTIONS: Record<Exclude<Category, 'admin'>, readonly string[]> = {
  application: ['', 'list', 'install', 'uninstall'],
  package: ['', 'list-packages', 'list-versions', 'get-latest-version'],
  blob: ['', 'add', 'add:stream', 'add:file', 'add:url', 'remove', 'list', 'get'],
  namespace: ['', 'create', 'list', 'manage'],
  group: ['', 'create', 'list', 'manage'],
  context: [
    '', 'create', 'list', 'delete', 'leave', 'invite', 'execute',
    'capabilities:grant', 'capabilities:revoke', 'application:update', 'alias',
    ...ALIAS_VERBS.flatMap((verb) => ALIAS_TYPES.map((type) => `alias:${verb}:${type}`)),
  ],
  keys: ['', 'create', 'list', 'delete', 'clients:list', 'clients:delete', 'permissions:get', 'permissions:update'],
};

/** Spellings the reference accepts for a canonical keys action (§6.1). */
const KEYS_SYNONYMS: Record<string, string> = {
  revoke: 'delete',
  clients: 'clients:list',
  permissions: 'permissions:get',
};

/**
 * How many bracket parameters an action reads (auth-wire §6.1): its resource id, a user (context
 * leave/invite/execute and the `context[<ctx>,<identity>]` binding), a method (context execute).
 * The reference parses further parameters and then discards them; hearth refuses them, so a grant
 * never reads as narrower than it is (`application[x]` would otherwise mean every application).
 */
function arityOf(category: Category, action: string): number {
  if (!isScoped(category, action)) return 0;
  if (category !== 'context') return 1;
  if (action === 'execute') return 3;
  if (action === '' || action === 'leave' || action === 'invite') return 2;
  return 1;
}

/** Actions that take a resource id; the others are global by nature. */
function isScoped(category: Category, action: string): boolean {
  switch (category) {
    case 'admin':
      return false;
    case 'application':
    case 'package':
      return action !== '';
    case 'blob':
      return action === 'remove' || action === 'list' || action === 'get';
    case 'keys':
      return action.startsWith('permissions:');
    default:
      return true;
  }
}

/** Longer strings are refused: no permission in the vocabulary comes near (ids are 64 characters). */
export const MAX_PERMISSION_LENGTH = 512;

const ADMIN: Permission = { category: 'admin', action: '', scope: null, user: null, method: null };

/**
 * Parses a permission string; null when it is not in the §6.1 vocabulary. Stricter than the
 * reference, so that a string never grants more than it reads as: `admin` is only ever the bare
 * word (the reference reads `admin:x` and `admin[x]` as admin, which let such spellings past the
 * admin-only grant rule), and brackets carry at most the parameters the action reads.
 */
export function parsePermission(s: string): Permission | null {
  if (s.length === 0 || s.length > MAX_PERMISSION_LENGTH) return null;
  if (s === 'admin') return { ...ADMIN };
  const open = s.indexOf('[');
  const main = open < 0 ? s : s.slice(0, open);
  const segments = main.split(':');
  const category = segments[0];
  if (!Object.hasOwn(ACTIONS, category)) return null;
  const cat = category as Exclude<Category, 'admin'>;

  // Stricter than the reference on shape: empty segments, trailing text after `]` and unbalanced
  // brackets are refused rather than silently read as something else.
  if (segments.slice(1).some((seg) => seg === '')) return null;
  let action = segments.slice(1).join(':');
  if (cat === 'keys' && Object.hasOwn(KEYS_SYNONYMS, action)) action = KEYS_SYNONYMS[action];
  if (!ACTIONS[cat].includes(action)) return null;

  let params: string[] = [];
  if (open >= 0) {
    const bracketed = s.slice(open);
    const inner = bracketed.slice(1, -1);
    if (!bracketed.endsWith(']') || inner.includes('[') || inner.includes(']')) return null;
    params = inner.split(',').map((p) => p.trim());
    if (params.length > 3) return null;
    // `[]` is the global scope; anything more must fit the action's parameters
    const arity = arityOf(cat, action);
    if (inner.trim() !== '' && params.length > arity) return null;
  }
  const [p1 = '', p2 = '', p3 = ''] = params;
  const withUser = cat === 'context' && (action === 'leave' || action === 'invite' || action === 'execute');
  return {
    category: cat,
    action,
    scope: isScoped(cat, action) && p1 !== '' ? p1 : null,
    user: withUser && p2 !== '' ? p2 : null,
    method: cat === 'context' && action === 'execute' && p3 !== '' ? p3 : null,
  };
}

export function isValidPermission(s: string): boolean {
  return parsePermission(s) !== null;
}

/**
 * Parses requested permissions once, at the edge (issue #17 finding 2): every string must parse
 * (400 naming it otherwise, no sanitising, no prefix matching) and is kept in its canonical form, so
 * every later comparison is between structures.
 */
export function parseGrants(list: readonly string[], field: string): Permission[] {
  return list.map((s, i) => {
    const p = typeof s === 'string' ? parsePermission(s) : null;
    if (!p) throw badRequest(`Invalid permission format: ${field}[${i}] ${JSON.stringify(typeof s === 'string' && s.length > 80 ? `${s.slice(0, 80)}…` : s)} is not a permission`);
    return p;
  });
}

/** Whether the held strings include the `admin` permission (compared as parsed, never by prefix). */
export function holdsAdmin(held: readonly string[]): boolean {
  return held.some((s) => parsePermission(s)?.category === 'admin');
}

/** The canonical string of a permission: `parsePermission(formatPermission(p))` gives `p` back. */
export function formatPermission(p: Permission): string {
  if (p.category === 'admin') return 'admin';
  const head = p.action === '' ? p.category : `${p.category}:${p.action}`;
  const params = [p.scope ?? '', p.user ?? '', p.method ?? ''];
  while (params.length > 0 && params[params.length - 1] === '') params.pop();
  return params.length === 0 ? head : `${head}[${params.join(',')}]`;
}

function scopeCovers(held: string | null, required: string | null): boolean {
  return held === null || held === required;
}

function isUnder(action: string, umbrella: string): boolean {
  return action === umbrella || action.startsWith(`${umbrella}:`);
}

/** Whether one held permission covers one required permission by the §6.2 rules. */
function covers(h: Permission, r: Permission): boolean {
  if (h.category === 'admin') return true;
  if (h.category !== r.category) return false;
  switch (h.category) {
    case 'application':
      return h.action === '' || (h.action === r.action && scopeCovers(h.scope, r.scope));
    case 'package':
      // No rule at all in the reference, not even "global covers any id": only exact strings.
      return false;
    case 'blob':
      if (h.action === '') return true;
      if (h.action === 'add') return isUnder(r.action, 'add');
      return h.action === r.action && scopeCovers(h.scope, r.scope);
    case 'namespace':
    case 'group':
      if (h.action === '') return scopeCovers(h.scope, r.scope);
      return h.action === r.action && scopeCovers(h.scope, r.scope);
    case 'context':
      return contextCovers(h, r);
    case 'keys':
      // `keys` is the umbrella; every other keys permission needs equality, scope included.
      return h.action === '' || (h.action === r.action && h.scope === r.scope);
  }
}

function contextCovers(h: Permission, r: Permission): boolean {
  // `context[s]` is a binding marker (§11), not an umbrella: it satisfies only `context[...]`.
  if (h.action === '') return r.action === '' && scopeCovers(h.scope, r.scope);
  if (h.action === 'alias') return isUnder(r.action, 'alias') && scopeCovers(h.scope, r.scope);
  if (h.action !== r.action || !scopeCovers(h.scope, r.scope)) return false;
  if (h.user !== null && h.user !== r.user) return false;
  // A held method covers only that method, but (as in the reference) also a requirement that
  // names no method.
  if (h.action === 'execute' && h.method !== null && r.method !== null && h.method !== r.method) return false;
  return true;
}

/**
 * Whether the held permission strings satisfy `required` (§6.2): exact string equality, or a held
 * permission covering it. Unparseable held strings are ignored; an unparseable requirement is never
 * satisfied (fail closed), not even by `admin`.
 */
export function satisfies(held: readonly string[], required: string): boolean {
  const req = parsePermission(required);
  if (req === null) return false;
  if (held.includes(required) || held.includes(formatPermission(req))) return true;
  for (const s of held) {
    const h = parsePermission(s);
    if (h !== null && covers(h, req)) return true;
  }
  return false;
}
