/**
 * @module client/aliases
 *
 * The alias routes of `/admin-api` (admin spec "Aliases"; admin-wire-a §6.1):
 * names for context, application and device ids, one namespace per scope.
 *
 * Envelopes are decoded exactly: create and delete answer `{"data": null}`
 * (an empty 2xx body is accepted too, as every client does for "no payload");
 * lookup answers `{"data": {"value": id | null}}` — an absent alias is a 2xx
 * with `null`, never a 404; list answers the flat map `{"data": {alias: id}}`.
 * Any other shape throws {@link DecodeError}; non-2xx answers throw
 * {@link HttpError} (400 invalid alias or id, 404 unknown scope, 409 alias exists).
 */

import { DecodeError } from './errors.ts';
import type { CallOptions, HttpClient, HttpResponse } from './http.ts';

/** The three alias scopes; `identity` no longer exists (404 on rc.83 nodes). */
export type AliasScope = 'context' | 'application' | 'device';

/** The id field of each scope's create request. */
const VALUE_FIELD: Record<AliasScope, string> = {
  context: 'contextId',
  application: 'applicationId',
  device: 'deviceId',
};

export class AliasesApi {
  constructor(private readonly http: HttpClient) {}

  /**
   * `POST /admin-api/alias/create/{scope}` with `{alias, contextId|applicationId|deviceId}`.
   * Resolves when created; 409 (HttpError) when the alias exists.
   */
  async create(scope: AliasScope, name: string, value: string, options?: CallOptions): Promise<void> {
    const field = VALUE_FIELD[scope] ?? `${scope}Id`;
    const response = await this.http.send(`/admin-api/alias/create/${seg(scope)}`, {
      ...options,
      method: 'POST',
      body: { alias: name, [field]: value },
    });
    this.expectEmpty(response);
  }

  /** `POST /admin-api/alias/lookup/{scope}/{name}` → the id, or `null` when there is no such alias. */
  async lookup(scope: AliasScope, name: string, options?: CallOptions): Promise<string | null> {
    const response = await this.http.send(`/admin-api/alias/lookup/${seg(scope)}/${seg(name)}`, {
      ...options,
      method: 'POST',
      body: {},
    });
    const data = envelope(response, this.http.decode(response));
    if (!isObject(data) || !('value' in data)) throw shape(response, 'expected {"data": {"value": …}}');
    const value = data.value;
    if (value === null || value === undefined) return null;
    if (typeof value !== 'string') throw shape(response, 'data.value is not a string');
    return value;
  }

  /** `POST /admin-api/alias/delete/{scope}/{name}`; deleting an absent alias succeeds too. */
  async delete(scope: AliasScope, name: string, options?: CallOptions): Promise<void> {
    const response = await this.http.send(`/admin-api/alias/delete/${seg(scope)}/${seg(name)}`, {
      ...options,
      method: 'POST',
      body: {},
    });
    this.expectEmpty(response);
  }

  /** `GET /admin-api/alias/list/{scope}` → `{alias: id}` (empty object when there are none). */
  async list(scope: AliasScope, options?: CallOptions): Promise<Record<string, string>> {
    const response = await this.http.send(`/admin-api/alias/list/${seg(scope)}`, options);
    const data = envelope(response, this.http.decode(response));
    if (!isObject(data)) throw shape(response, 'expected {"data": {alias: id, …}}');
    const out: Record<string, string> = Object.create(null);
    for (const [name, value] of Object.entries(data)) {
      if (typeof value !== 'string') throw shape(response, `data[${JSON.stringify(name)}] is not a string`);
      out[name] = value;
    }
    return out;
  }

  /** "No payload": `{"data": null}` or an empty body. */
  private expectEmpty(response: HttpResponse): void {
    const body = this.http.decode(response);
    if (body === undefined) return;
    if (!isObject(body) || !('data' in body) || body.data !== null) throw shape(response, 'expected {"data": null}');
  }
}

/** One path segment, percent-encoded so an alias can never change the route. */
const seg = (s: string): string => encodeURIComponent(s);

function envelope(response: HttpResponse, body: unknown): unknown {
  if (!isObject(body) || !('data' in body)) throw shape(response, 'expected a {"data": …} envelope');
  return body.data;
}

function shape(response: HttpResponse, detail: string): DecodeError {
  return new DecodeError(response.method, response.url, response.status, response.bodyText, detail);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
