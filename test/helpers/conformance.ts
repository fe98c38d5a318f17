/**
 * OpenAPI conformance checks through the SDK (issue #6): a client whose `fetch` records every
 * exchange, and a checker that matches each recorded answer to its route in the node's OpenAPI
 * document and validates the body against the declared schema for that status. Each conformance
 * test file drives one area of the API through the SDK and ends with `assertAreaCovered(area)`: every operation of the area was called
 * at least once and every answer matched its schema. `AREAS` assigns each operation to one file,
 * and test/conformance/areas.conformance.test.ts proves the areas cover the whole document.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { expect } from 'vitest';
import { createClient, MemoryTokenStore, type Client, type ClientOptions } from '../../src/client/index.ts';
import { startTestNode, type TestNode, type TestNodeOptions } from './node.ts';

type Json = Record<string, any>;

export interface Exchange {
  method: string;
  path: string;
  status: number;
  contentType: string;
  /** parsed JSON body, when the answer was JSON */
  body?: unknown;
  /** the answer had no content type and no body (the spec's "none", a 204) */
  emptyBody?: boolean;
}

/** Group upgrade and migration routes (their own conformance file: they need an upgradable application). */
const UPGRADE_ROUTE = /^\/admin-api\/groups\/[^/]+\/(upgrade|upgrade\/status|upgrade\/retry|migration-status|cascade-status|migration\/abort)$/;

/** Delegated execution (its own conformance file: it needs a member's warrants). `GET …/intents` stays with contexts. */
const delegated = (m: string, p: string) =>
  (m === 'POST' && /^\/admin-api\/contexts\/[^/]+\/intents$/.test(p)) || /^\/admin-api\/groups\/[^/]+\/(context|governance)-intents$/.test(p);

/** Which conformance file owns which operations (by path prefix, after `/admin-api` or at the root). */
export const AREAS: Record<string, (method: string, path: string) => boolean> = {
  auth: (_m, p) => p.startsWith('/auth/') || p.startsWith('/admin/'),
  node: (_m, p) =>
    ['/admin-api/health', '/admin-api/ready', '/admin-api/is-authed', '/admin-api/peers', '/admin-api/network/status', '/admin-api/usage', '/admin-api/openapi.json', '/metrics'].includes(p),
  aliases: (_m, p) => p.startsWith('/admin-api/alias/'),
  blobs: (_m, p) => p.startsWith('/admin-api/blobs'),
  applications: (_m, p) =>
    p.startsWith('/admin-api/applications') || p.startsWith('/admin-api/packages') || p.startsWith('/admin-api/install-') || p === '/admin-api/dev-bundle',
  contexts: (m, p) => (p.startsWith('/admin-api/contexts') || p === '/jsonrpc') && !delegated(m, p),
  events: (_m, p) => p === '/sse' || p.startsWith('/sse/') || p === '/ws',
  accounts: (_m, p) => p.startsWith('/admin-api/identity') || p.startsWith('/admin-api/account/'),
  namespaces: (_m, p) => p.startsWith('/admin-api/namespaces'),
  groups: (m, p) => p.startsWith('/admin-api/groups') && !UPGRADE_ROUTE.test(p) && !delegated(m, p),
  upgrades: (_m, p) => UPGRADE_ROUTE.test(p),
  delegation: delegated,
  tee: (_m, p) => p.startsWith('/admin-api/tee/'),
};

export function areaOf(method: string, path: string): string | undefined {
  return Object.keys(AREAS).find((area) => AREAS[area](method, path));
}

export class Conformance {
  readonly exchanges: Exchange[] = [];
  private readonly ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly matched = new Map<string, number>();
  private readonly failures: string[] = [];
  private readonly unmatched: string[] = [];

  private constructor(
    readonly baseUrl: string,
    readonly doc: Json,
  ) {}

  static async load(baseUrl: string): Promise<Conformance> {
    const doc = await createClient({ baseUrl }).admin.openApi();
    return new Conformance(baseUrl, doc as Json);
  }

  /** A recording `fetch`: answers are cloned and checked, the caller sees the original. */
  readonly fetch: typeof fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const contentType = response.headers.get('content-type') ?? '';
    const exchange: Exchange = { method, path: url.pathname, status: response.status, contentType };
    if (contentType.includes('application/json')) {
      const text = await response.clone().text();
      exchange.body = text === '' ? undefined : JSON.parse(text);
    } else if (contentType === '') {
      // An untyped answer must be empty (a documented `Empty`); anything else is checked as text.
      exchange.emptyBody = (await response.clone().text()) === '';
    }
    this.record(exchange);
    return response;
  };

  /** An SDK client that records through this checker; pass a token store etc. in `options`. */
  client(options: Partial<ClientOptions> = {}): Client {
    return createClient({ baseUrl: this.baseUrl, ...options, fetch: this.fetch });
  }

  /** For exchanges the recording fetch cannot see (a WebSocket upgrade). */
  record(exchange: Exchange): void {
    this.exchanges.push(exchange);
    const found = this.operationFor(exchange.method, exchange.path);
    if (!found) {
      this.unmatched.push(`${exchange.method} ${exchange.path} → ${exchange.status}`);
      return;
    }
    const key = `${exchange.method} ${found.template}`;
    const response = found.op.responses?.[String(exchange.status)];
    if (!response) {
      // Error answers need not be listed one by one; their body is still the error shape.
      if (exchange.status >= 400 && isErrorBody(exchange.body)) return;
      this.failures.push(`${key}: status ${exchange.status} is not in the document`);
      return;
    }
    const media = response.content ? Object.keys(response.content) : [];
    if (exchange.body !== undefined && media.includes('application/json')) {
      const validate = this.validator(`${key} ${exchange.status}`, response.content['application/json'].schema);
      if (!validate(exchange.body)) {
        this.failures.push(`${key} ${exchange.status}: ${this.ajv.errorsText(validate.errors)} in ${JSON.stringify(exchange.body).slice(0, 300)}`);
        return;
      }
    } else if (exchange.emptyBody && !documentsEmpty(response)) {
      this.failures.push(`${key} ${exchange.status}: an empty answer, but the document promises ${media.join(', ')}`);
      return;
    } else if (media.length > 0 && !media.some((m) => mediaMatches(m, exchange.contentType)) && exchange.status !== 101 && !exchange.emptyBody) {
      this.failures.push(`${key} ${exchange.status}: content type ${exchange.contentType} is not one of ${media.join(', ')}`);
      return;
    }
    if (exchange.status < 400 || exchange.status === 101) this.matched.set(key, (this.matched.get(key) ?? 0) + 1);
  }

  /** Every operation of `area` answered successfully at least once, and no answer broke its schema. */
  assertAreaCovered(area: string): void {
    const missing = this.operations()
      .filter(({ method, template }) => areaOf(method, template) === area)
      .map(({ method, template }) => `${method} ${template}`)
      .filter((key) => !this.matched.has(key));
    expect(this.failures, 'answers that do not match the OpenAPI document').toEqual([]);
    expect(this.unmatched, 'requests that match no documented route').toEqual([]);
    expect(missing, `operations of "${area}" never exercised with a successful answer`).toEqual([]);
  }

  operations(): { method: string; template: string; op: Json }[] {
    const out: { method: string; template: string; op: Json }[] = [];
    for (const [template, ops] of Object.entries(this.doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(ops)) out.push({ method: method.toUpperCase(), template, op });
    }
    return out;
  }

  private operationFor(method: string, path: string): { template: string; op: Json } | undefined {
    // Static paths win over parameterised ones, as in the router.
    const candidates = this.operations()
      .filter((o) => o.method === method && templateMatches(o.template, path))
      .sort((a, b) => paramCount(a.template) - paramCount(b.template));
    return candidates[0];
  }

  private validator(key: string, schema: Json): ValidateFunction {
    const known = this.validators.get(key);
    if (known) return known;
    const compiled = this.ajv.compile(schema);
    this.validators.set(key, compiled);
    return compiled;
  }
}

function templateMatches(template: string, path: string): boolean {
  const t = template.split('/');
  const p = path.replace(/\/$/, '').split('/');
  if (t.length !== p.length) return false;
  return t.every((seg, i) => (seg.startsWith('{') ? p[i] !== '' : seg === p[i]));
}

const paramCount = (template: string) => (template.match(/\{/g) ?? []).length;

// A documented media type or media range (any type, or every subtype of one, as OpenAPI allows)
// against an answer's Content-Type.
function mediaMatches(range: string, contentType: string): boolean {
  if (range === '*/*') return contentType !== '';
  return range.endsWith('/*') ? contentType.startsWith(range.slice(0, -1)) : contentType.startsWith(range);
}

/** A response documented as `Empty` (response-schemas.ts): its only schema is the zero-length string. */
function documentsEmpty(response: Json): boolean {
  const schemas = Object.values((response.content ?? {}) as Json).map((c) => (c as Json).schema as Json | undefined);
  return schemas.length > 0 && schemas.every((s) => s?.type === 'string' && s.maxLength === 0);
}

function isErrorBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && typeof (body as Json).error === 'string';
}

/** A conformance test's node, its checker, and two SDK clients logged in as the node's admin. */
export interface ConformanceNode {
  node: TestNode;
  conformance: Conformance;
  /** records every exchange: the answers the checker checks */
  client: Client;
  /** shares `client`'s tokens and records nothing: set-up calls owned by another area's file */
  setup: Client;
}

/** Starts a node for a conformance test: its OpenAPI document loaded into a checker, a recording client logged in, a set-up client beside it. */
export async function startConformanceNode(options: TestNodeOptions = {}): Promise<ConformanceNode> {
  const node = await startTestNode(options);
  try {
    const conformance = await Conformance.load(node.url);
    const tokenStore = new MemoryTokenStore();
    const client = conformance.client({ tokenStore });
    await client.auth.login({ username: node.adminUser, password: node.adminPassword });
    const setup = createClient({ baseUrl: node.url, tokenStore });
    return { node, conformance, client, setup };
  } catch (e) {
    await node.destroy();
    throw e;
  }
}
