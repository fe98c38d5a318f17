/**
 * The guard's route table (auth-wire §5.1, §5.2): which requests the node guard covers, the
 * permission each needs, and the context/group/application/namespace/blob it acts on (for client
 * key binding, §11). Also the `/admin/*` table (§2, "Intended" column). It is a table of rules, not
 * of registered routes, so routes that do not exist yet are already covered: anything unmapped
 * under `/admin-api` needs `admin` (default deny).
 *
 * Paths are matched the way the router will see them: one trailing slash is ignored (the app sets
 * `ignoreTrailingSlash`) and each segment is percent-decoded, so an encoded spelling of a guarded
 * path cannot slip past the guard.
 */

export type TargetKind = 'context' | 'group' | 'application' | 'namespace' | 'blob';
export interface Target {
  kind: TargetKind;
  id: string;
}

export type GuardDecision =
  | { kind: 'public' }
  | { kind: 'unguarded' }
  | { kind: 'guarded'; permission: string | null; target?: Target; bindingChecked: 'route' | 'handler' };

export interface AdminRouteDecision {
  /** null = any valid token */
  permission: string | null;
  /** CORS preflight: answered before any auth check */
  public?: true;
}

type Params = Record<string, string>;
type Build = string | ((p: Params, segs: string[]) => string);
type Row = readonly [method: string, pattern: string, permission: Build];

/**
 * Matches path segments against a pattern: `name` literal, `a|b` one of several literals, `:id` an
 * id, and a final `**` for zero or more further segments. Ids that would break the bracket syntax
 * of the permission they are put in (`[`, `]`, `,`, outer spaces) do not match, so such paths fall
 * through to the default.
 */
function match(pattern: string, segs: readonly string[]): Params | null {
  const { parts, rest } = compiled(pattern);
  if (rest ? segs.length < parts.length : segs.length !== parts.length) return null;
  const params: Params = {};
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const seg = segs[i];
    if (typeof part === 'string') {
      if (!isSafeId(seg)) return null;
      params[part] = seg;
    } else if (!part.has(seg)) {
      return null;
    }
  }
  return params;
}

/** A pattern split once (every guarded request matches against the tables): a param name, or the literals a segment may be. */
interface Compiled {
  parts: Array<string | ReadonlySet<string>>;
  rest: boolean;
}
const patterns = new Map<string, Compiled>();

function compiled(pattern: string): Compiled {
  let c = patterns.get(pattern);
  if (!c) {
    const raw = pattern === '' ? [] : pattern.split('/');
    const rest = raw[raw.length - 1] === '**';
    if (rest) raw.pop();
    c = { parts: raw.map((part) => (part.startsWith(':') ? part.slice(1) : new Set(part.split('|')))), rest };
    patterns.set(pattern, c);
  }
  return c;
}

function isSafeId(s: string): boolean {
  return s.length > 0 && s.trim() === s && !/[[\],]/.test(s);
}

/** `/admin-api` rows, in §5.2 order except that a literal segment precedes a parameter at the same
 * position (the router's precedence: `contexts/sync/x` is the sync route, not context `sync`). */
const ADMIN_API_ROWS: readonly Row[] = [
  ['GET', 'applications', 'application:list'],
  ['GET', 'applications/:id', (p) => `application:list[${p.id}]`],
  ['GET', 'applications/:id/versions', (p) => `application:list[${p.id}]`],
  ['POST', 'install-application', 'application:install'],
  ['GET', 'packages', 'package:list-packages'],
  ['GET', 'packages/:p/versions', (p) => `package:list-versions[${p.p}]`],
  ['GET', 'packages/:p/latest', (p) => `package:get-latest-version[${p.p}]`],
  ['GET', 'contexts', 'context:list'],
  ['POST', 'contexts', 'context:create'],
  ['POST', 'contexts/sync', 'context:execute'],
  ['POST', 'contexts/sync/:id', (p) => `context:execute[${p.id}]`],
  // hearth's sync status: read as the contexts are (docs/sync.md)
  ['GET', 'contexts/sync', 'context:list'],
  ['GET', 'contexts/for-application/:app', (p) => `context:list[${p.app}]`],
  ['GET', 'contexts/with-executors/for-application/:app', (p) => `context:list[${p.app}]`],
  ['GET', 'contexts/:id', (p) => `context:list[${p.id}]`],
  ['DELETE', 'contexts/:id', (p) => `context:delete[${p.id}]`],
  ['GET', 'contexts/:id/identities|identities-owned|storage|group|sync', (p) => `context:list[${p.id}]`],
  ['POST', 'contexts/:id/join|leave|resync', (p) => `context:execute[${p.id}]`],
  ['POST', 'contexts/:id/application', (p) => `context:application:update[${p.id}]`],
  ['POST', 'identity/context', 'context:execute'],
  ['GET', 'identity', 'namespace:list'],
  ['GET', 'namespaces', 'namespace:list'],
  ['POST', 'namespaces', 'namespace:create'],
  ['GET', 'namespaces/for-application/:app', (p) => `namespace:list[${p.app}]`],
  ['GET', 'namespaces/:id', (p) => `namespace:list[${p.id}]`],
  ['DELETE', 'namespaces/:id', (p) => `namespace:manage[${p.id}]`],
  ['GET', 'namespaces/:id/groups', (p) => `namespace:list[${p.id}]`],
  ['POST', 'namespaces/:id/groups', 'group:create'],
  ['POST', 'namespaces/:id/invite|join|leave', (p) => `namespace:manage[${p.id}]`],
  ['POST', 'groups', 'group:create'],
  ['POST', 'groups/join', 'group:manage'],
  ['GET', 'groups/:gid/**', (p) => `group:list[${p.gid}]`],
  ['POST', 'groups/:gid/**', (p) => `group:manage[${p.gid}]`],
  ['PUT', 'groups/:gid/**', (p) => `group:manage[${p.gid}]`],
  ['DELETE', 'groups/:gid/**', (p) => `group:manage[${p.gid}]`],
  ['PUT', 'blobs', 'blob:add:stream'],
  ['GET', 'blobs', 'blob:list'],
  ['GET', 'blobs/:id', (p) => `blob:get[${p.id}]`],
  ['DELETE', 'blobs/:id', (p) => `blob:remove[${p.id}]`],
  ['POST', 'alias/create|lookup|delete/context|application|identity/**', (_, s) => `context:alias:${s[1]}:${s[2]}`],
  ['GET', 'alias/list/context|application|identity', (_, s) => `context:alias:list:${s[2]}`],
  // Declared `admin`, as the reference's default for everything §5.2 leaves unmapped: every route
  // of the spec is named here, so a route is either declared or refused by the matrix test
  // (test/e2e/auth/permission-matrix.e2e.test.ts), never silently covered by the fallback alone.
  ['GET', 'peers', 'admin'],
  ['GET', 'network/status', 'admin'],
  ['GET', 'usage', 'admin'],
  ['POST', 'install-dev-application', 'admin'],
  ['PUT', 'install-dev-application/bundle', 'admin'],
  // hearth: bundles a raw .wasm with the node's development key (issue #34 §2); installs nothing
  ['PUT', 'dev-bundle', 'admin'],
  ['DELETE', 'applications/:id', 'admin'],
  ['GET', 'applications/:id/abi', 'admin'],
  ['POST', 'contexts/invite-specialized-node', 'admin'],
  ['GET', 'contexts/:id/intents', 'admin'],
  // hearth's raw state rows (issue #25 §4): the application's bytes as stored, for the node's admin only
  ['GET', 'contexts/:id/raw-state', 'admin'],
  ['GET', 'contexts/:id/raw-state/value', 'admin'],
  ['POST', 'contexts/:id/intents|query|presence-intents|warrant-nonce', 'admin'],
  ['GET', 'contexts/:id/warrant-nonce/:key', 'admin'],
  ['GET', 'account/devices|applications', 'admin'],
  ['POST', 'account/pair-init|pair-complete|sign-with-root', 'admin'],
  ['POST', 'account/devices/:id/relink', 'admin'],
  ['PUT', 'account/devices/:id/scope|label', 'admin'],
  ['POST', 'namespaces/:id/admit|admin', 'admin'],
  ['POST', 'namespaces/:id/account/revoke|link-device', 'admin'],
  ['GET', 'tee/info', 'admin'],
  ['POST', 'tee/attest|registration-attest', 'admin'],
  ['POST', 'alias/create|lookup|delete/device/**', 'admin'],
  ['GET', 'alias/list/device', 'admin'],
];

/** The event-stream and JSON-RPC routes: any valid token (JSON-RPC: `context:execute`); handlers check ids. */
const STREAM_ROWS: readonly (readonly [method: string, pattern: string])[] = [
  ['POST', 'jsonrpc'],
  ['GET', 'ws'],
  ['GET', 'sse'],
  ['POST', 'sse/subscription'],
  ['GET', 'sse/session/:sid'],
];

/** Forward-auth: public, but its answer is the bearer token's validity, as a guard's (auth-wire §2.3). */
const TOKEN_CHECK_ROWS: readonly (readonly [method: string, pattern: string])[] = [
  ['GET', 'auth/validate'],
  ['POST', 'auth/validate'],
];

/**
 * Routes outside the guarded prefixes, served to anyone: the auth surface's public half
 * (auth-wire §1.1), the metrics scrape (decisions: unauthenticated, as the reference) and the
 * public admin-api probes. Listed one by one: a new unguarded route must be declared here.
 */
const PUBLIC_ROWS: readonly (readonly [method: string, pattern: string])[] = [
  ['GET', 'auth/health'],
  ['GET', 'auth/providers'],
  ['POST', 'auth/token'],
  ['POST', 'auth/refresh'],
  ['POST', 'auth/logout'],
  ['POST', 'auth/mock-token'],
  ['GET', 'auth/login'],
  ['GET', 'metrics'],
  ['GET', 'admin-api/health|ready|is-authed|openapi.json'],
];

/** What an `/admin-api` path acts on, whatever the method (routes left to `admin` included). */
const TARGET_ROWS: readonly (readonly [pattern: string, kind: TargetKind | null, param: string])[] = [
  ['contexts/sync', null, ''],
  ['contexts/invite-specialized-node', null, ''],
  ['contexts/sync/:id', 'context', 'id'],
  ['contexts/for-application/:id', 'application', 'id'],
  ['contexts/with-executors/for-application/:id', 'application', 'id'],
  ['contexts/:id/**', 'context', 'id'],
  ['applications/:id/**', 'application', 'id'],
  ['namespaces/for-application/:id', 'application', 'id'],
  ['namespaces/:id/**', 'namespace', 'id'],
  ['groups/join', null, ''],
  ['groups/:id/**', 'group', 'id'],
  ['blobs/:id/**', 'blob', 'id'],
];

const PUBLIC_ADMIN_API = new Set(['health', 'ready', 'is-authed', 'openapi.json']);

/**
 * Public whatever the mode, as the reference routes them (admin-wire-b §9.1, §14 row 11): TEE
 * information and attestation carry nothing secret and are what a verifier asks first.
 * `registration-attest` stays protected.
 */
const TEE_PUBLIC_ROWS: readonly (readonly [method: string, pattern: string])[] = [
  ['GET', 'tee/info'],
  ['POST', 'tee/attest'],
];

/**
 * The delegated-execution routes (admin spec "Authentication" rule 3): public on a node whose
 * config sets `admin.delegated_access = true`, where the signed warrant (or presence statement) is
 * the credential; otherwise guarded like their neighbours.
 */
const DELEGATED_ROWS: readonly (readonly [method: string, pattern: string])[] = [
  ['GET', 'contexts/:id/intents'],
  ['POST', 'contexts/:id/intents'],
  ['POST', 'contexts/:id/presence-intents'],
  ['GET', 'groups/:id/context-intents|governance-intents'],
  ['POST', 'groups/:id/context-intents|governance-intents'],
];

/** How the node is configured, as far as the guard's table depends on it. */
export interface RouteOptions {
  /** `admin.delegated_access` */
  delegatedAccess?: boolean;
}

const listed = (rows: readonly (readonly [string, string])[], method: string, segs: string[]) =>
  rows.some(([m, pattern]) => m === method && match(pattern, segs) !== null);

function adminApiTarget(segs: readonly string[]): Target | undefined {
  for (const [pattern, kind, param] of TARGET_ROWS) {
    const params = match(pattern, segs);
    if (params) return kind ? { kind, id: params[param] } : undefined;
  }
  return undefined;
}

function adminApiPermission(method: string, segs: string[]): string {
  for (const [rowMethod, pattern, build] of ADMIN_API_ROWS) {
    if (rowMethod !== method) continue;
    const params = match(pattern, segs);
    if (params) return typeof build === 'string' ? build : build(params, segs);
  }
  return 'admin';
}

/**
 * Splits a URL path into decoded segments (without the leading empty one), as the router reads it.
 * null when the path is not origin-form or a segment's percent-encoding is malformed.
 */
function segmentsOf(rawPath: string): string[] | null {
  if (!rawPath.startsWith('/')) return null;
  // The router ends the path at `?` or `#`; so must we, or `/sse#x` would look unguarded.
  const path = rawPath.split(/[?#]/, 1)[0];
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  try {
    return trimmed.split('/').slice(1).map((seg) => decodeURIComponent(seg));
  } catch {
    return null;
  }
}

function normalMethod(method: string): string {
  const m = method.toUpperCase();
  return m === 'HEAD' ? 'GET' : m;
}

const deny = (): GuardDecision => ({ kind: 'guarded', permission: 'admin', bindingChecked: 'route' });

/** How the node guard treats a request (`path` without its query string). */
export function classifyRoute(method: string, path: string, options: RouteOptions = {}): GuardDecision {
  const m = normalMethod(method);
  const segs = segmentsOf(path);
  // An unreadable path is refused rather than guessed at; the router would not serve it either.
  if (segs === null) return m === 'OPTIONS' ? { kind: 'public' } : deny();
  const [root, ...rest] = segs;
  const guardedRoot = root === 'admin-api' || root === 'jsonrpc' || root === 'ws' || root === 'sse';
  if (!guardedRoot) return { kind: 'unguarded' };
  if (m === 'OPTIONS') return { kind: 'public' };
  // An empty segment (`//`) is no route; refusing it keeps odd spellings from reaching a handler.
  if (rest.some((s) => s === '')) return deny();

  switch (root) {
    case 'admin-api': {
      if (rest.length === 1 && m === 'GET' && PUBLIC_ADMIN_API.has(rest[0])) return { kind: 'public' };
      if (listed(TEE_PUBLIC_ROWS, m, rest)) return { kind: 'public' };
      if (options.delegatedAccess && listed(DELEGATED_ROWS, m, rest)) return { kind: 'public' };
      const target = adminApiTarget(rest);
      const permission = adminApiPermission(m, rest);
      return target
        ? { kind: 'guarded', permission, target, bindingChecked: 'route' }
        : { kind: 'guarded', permission, bindingChecked: 'route' };
    }
    case 'jsonrpc':
      // Only `/jsonrpc` itself is a route; deeper paths fail closed.
      if (rest.length > 0) return deny();
      return { kind: 'guarded', permission: m === 'POST' ? 'context:execute' : null, bindingChecked: 'handler' };
    case 'ws':
      if (rest.length > 0) return deny();
      return { kind: 'guarded', permission: null, bindingChecked: 'handler' };
    default:
      // `/sse` and everything under it: any valid token; the handler checks subscribed ids.
      return { kind: 'guarded', permission: null, bindingChecked: 'handler' };
  }
}

/** `/admin` rows (auth-wire §2, "Intended" column). */
const ADMIN_ROWS: readonly (readonly [method: string, pattern: string, permission: string | null | ((p: Params) => string)])[] = [
  ['POST', 'revoke', 'keys:delete'],
  ['GET', 'keys', 'keys:list'],
  ['POST', 'keys', 'admin'],
  ['GET', 'keys/clients', 'keys:clients:list'],
  ['DELETE', 'keys/:id', 'keys:delete'],
  ['POST', 'client-key', null], // the handler itself requires `admin`
  ['DELETE', 'keys/:k/clients/:c', 'keys:clients:delete'],
  ['GET', 'keys/:id/permissions', (p) => `keys:permissions:get[${p.id}]`],
  ['PUT', 'keys/:id/permissions', 'admin'],
  ['GET', 'identity', null],
];

/**
 * What the route table declares for a request: public, or guarded with a permission (null = any
 * valid token), from an explicit row; undefined when only the default-deny fallback would decide.
 * The permission matrix test reads this for every registered route, so a route added without a
 * declaration fails it (issue #17 "Keep it fixed").
 */
export type Declared = { kind: 'public' } | { kind: 'guarded'; permission: string | null };

export function declaredAccess(method: string, path: string): Declared | undefined {
  const m = normalMethod(method);
  const segs = segmentsOf(path);
  if (segs === null || segs.some((x) => x === '')) return undefined;
  const hit = (rows: readonly (readonly [string, string, ...unknown[]])[]) => rows.find(([rm, pattern]) => rm === m && match(pattern, segs) !== null);
  if (hit(PUBLIC_ROWS)) return { kind: 'public' };
  if (segs[0] === 'admin-api' && listed(TEE_PUBLIC_ROWS, m, segs.slice(1))) return { kind: 'public' };
  if (hit(TOKEN_CHECK_ROWS)) return { kind: 'guarded', permission: null };
  if (hit(STREAM_ROWS)) {
    const d = classifyRoute(m, path);
    return d.kind === 'guarded' ? { kind: 'guarded', permission: d.permission } : undefined;
  }
  if (segs[0] === 'admin-api') {
    const row = hit(ADMIN_API_ROWS.map(([rm, pattern, build]) => [rm, `admin-api/${pattern}`, build] as const));
    return row ? { kind: 'guarded', permission: adminApiPermission(m, segs.slice(1)) } : undefined;
  }
  if (segs[0] === 'admin') {
    const row = hit(ADMIN_ROWS.map(([rm, pattern, permission]) => [rm, `admin/${pattern}`, permission] as const));
    return row ? { kind: 'guarded', permission: classifyAdminRoute(m, path).permission } : undefined;
  }
  return undefined;
}

/** The permission the `/admin` middleware requires; anything unmapped under `/admin` needs `admin`. */
export function classifyAdminRoute(method: string, path: string): AdminRouteDecision {
  const m = normalMethod(method);
  if (m === 'OPTIONS') return { permission: null, public: true };
  const segs = segmentsOf(path);
  if (segs === null || segs[0] !== 'admin') return { permission: 'admin' };
  const rest = segs.slice(1);
  if (rest.some((s) => s === '')) return { permission: 'admin' };
  for (const [rowMethod, pattern, permission] of ADMIN_ROWS) {
    if (rowMethod !== m) continue;
    const params = match(pattern, rest);
    if (params) return { permission: typeof permission === 'function' ? permission(params) : permission };
  }
  return { permission: 'admin' };
}

/**
 * Whether a registered route (method, fastify url template) needs a bearer token on this node: the
 * OpenAPI document's `security` (http/openapi.ts). `/admin/*` routes the node guard does not cover
 * check their own token (auth-wire §2).
 */
export function needsToken(method: string, url: string, options: RouteOptions = {}): boolean {
  const guard = classifyRoute(method, concretePath(url), options);
  const open = guard.kind === 'public' || (guard.kind === 'unguarded' && !url.startsWith('/admin/'));
  return !open;
}

/** The guard classifies concrete paths; any non-empty segment stands in for a parameter. */
function concretePath(url: string): string {
  return url.replace(/:[A-Za-z0-9_]+/g, 'x').replace(/\*$/, 'x');
}
