/**
 * @module client/admin
 *
 * The `/admin-api` client (admin-wire-a). This first part covers the public
 * status routes (admin-wire-a §2); later modules add the guarded surface.
 *
 * Decision for `health()` and `ready()`: a 200 returns the unwrapped
 * `{status}`; a 503 ("not yet", admin-wire-a §1.5) throws {@link HttpError} like
 * every other non-2xx, and the node's status stays readable from the error:
 * `err.status === 503`, `err.body.data.status` (e.g. `"store_unavailable"`),
 * and `err.message` ends with `status store_unavailable`. Use
 * {@link statusOf} to read it without casts.
 */

import { HttpError } from './errors.ts';
import type { CallOptions, HttpClient } from './http.ts';
import type { NamespaceUsage } from '../wire/usage.ts';

/** `{status}` payload of health, ready and is-authed. */
export interface StatusResponse {
  /** health: `"alive"` | `"store_unavailable"`; ready: `"ready"` | `"starting"` | `"shutting_down"` | `"store_unavailable"`. */
  status: string;
}

export class AdminApi {
  constructor(private readonly http: HttpClient) {}

  /** `GET /admin-api/health` → `{status: "alive"}`; 503 throws HttpError (see module doc). */
  health(options?: CallOptions): Promise<StatusResponse> {
    return this.http.data('/admin-api/health', options);
  }

  /** `GET /admin-api/ready` → `{status: "ready"}`; 503 throws HttpError (see module doc). */
  ready(options?: CallOptions): Promise<StatusResponse> {
    return this.http.data('/admin-api/ready', options);
  }

  /** `GET /admin-api/is-authed` → `{status: "alive"}` (public; always answers). */
  isAuthed(options?: CallOptions): Promise<StatusResponse> {
    return this.http.data('/admin-api/is-authed', options);
  }

  /** `GET /admin-api/openapi.json` → the node's OpenAPI 3.1 document (public; flat). */
  openApi(options?: CallOptions): Promise<Record<string, unknown>> {
    return this.http.json('/admin-api/openapi.json', options);
  }

  /** `GET /metrics` → Prometheus text (unauthenticated). */
  metrics(options?: CallOptions): Promise<string> {
    return this.http.text('/metrics', options);
  }

  /** `GET /admin-api/peers` → `{count}` (flat): connected peers, 0 on a standalone node. */
  peers(options?: CallOptions): Promise<{ count: number }> {
    return this.http.json('/admin-api/peers', options);
  }

  /** `GET /admin-api/network/status` (flat): peer id, addresses, connections, topics, traffic (docs/network.md). */
  networkStatus(options?: CallOptions): Promise<NetworkStatus> {
    return this.http.json('/admin-api/network/status', options);
  }

  /** `GET /admin-api/usage` (flat): per-namespace counts and bytes held on this node. */
  usage(options?: CallOptions): Promise<Usage> {
    return this.http.json('/admin-api/usage', options);
  }
}

/** `GET /admin-api/network/status`: the reference's fields plus hearth's figures (docs/network.md). */
export interface NetworkStatus {
  localPeerId: string;
  listenAddrs: string[];
  externalAddrs: string[];
  [field: string]: unknown;
}

/** `GET /admin-api/usage` (rows: src/wire/usage.ts). */
export interface Usage {
  namespaces: NamespaceUsage[];
}

/** The `data.status` a health/ready answer or its 503 {@link HttpError} carries, if any. */
export function statusOf(value: StatusResponse | unknown): string | undefined {
  if (value instanceof HttpError) value = (value.body as { data?: unknown } | undefined)?.data;
  const status = (value as { status?: unknown } | null | undefined)?.status;
  return typeof status === 'string' ? status : undefined;
}
