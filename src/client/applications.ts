/**
 * @module client/applications
 *
 * Applications and packages of `/admin-api` (admin spec "Applications and
 * packages"; admin-wire-a §3). Decoding follows the reference exactly:
 * installs, uninstall, list, get, ABI and application versions are enveloped
 * (`{"data": …}`); `/packages`, `/packages/{p}/versions` and
 * `/packages/{p}/latest` are flat. Any other shape throws {@link DecodeError};
 * non-2xx answers throw {@link HttpError} (400 bad input or service name,
 * 403 outside the node's install root, 404 unknown application or file,
 * 502 the registry cannot resolve the package).
 *
 * Installs can take longer than the default 10 s deadline (the node
 * downloads and verifies a bundle of up to 512 MiB), so they default to
 * {@link INSTALL_TIMEOUT_MS}; every method takes `signal` and `timeoutMs`.
 */

import { DecodeError } from './errors.ts';
import type { CallOptions, HttpClient, HttpResponse } from './http.ts';
import type { ApplicationVersionEntry, LatestVersion } from '../wire/applications.ts';

/** Default deadline of `install`, `installDev` and `installBundle`. */
export const INSTALL_TIMEOUT_MS = 300_000;

/** admin-wire-a §3.2 (snake_case as the node sends it; ids are 64 hex). */
export interface Application {
  id: string;
  blob: { bytecode: string; compiled: string };
  /** bytes of the stored bundle */
  size: number;
  /** `file:///…` for dev installs, the registry artifact otherwise */
  source: string;
  /** UTF-8 JSON bytes `{package, version, name, …}` */
  metadata: number[];
  signer_id?: string;
  package?: string;
  version?: string;
  services?: Record<string, { bytecode: string; compiled: string }>;
}

export type { ApplicationVersionEntry, LatestVersion };

export interface AbiOptions extends CallOptions {
  /** the service of a multi-service application (`service_name`) */
  serviceName?: string;
}

export class ApplicationsApi {
  constructor(private readonly http: HttpClient) {}

  /** `POST /admin-api/install-application {package, version}`: resolved from the node's registry. */
  async install(pkg: string, version: string, options: CallOptions = {}): Promise<{ applicationId: string }> {
    const response = await this.http.send('/admin-api/install-application', {
      timeoutMs: INSTALL_TIMEOUT_MS,
      ...options,
      method: 'POST',
      body: { package: pkg, version },
    });
    return installed(response, this.data(response));
  }

  /** `POST /admin-api/install-dev-application {path}`: a signed `.mpk` on the node's filesystem. */
  async installDev(path: string, options: CallOptions = {}): Promise<{ applicationId: string }> {
    const response = await this.http.send('/admin-api/install-dev-application', {
      timeoutMs: INSTALL_TIMEOUT_MS,
      ...options,
      method: 'POST',
      body: { path },
    });
    return installed(response, this.data(response));
  }

  /**
   * hearth: `PUT /admin-api/install-dev-application/bundle` with the `.mpk` bytes — a dev install
   * of a bundle that is not on the node's filesystem (e.g. a file picked in a browser). In a
   * browser `onProgress` follows the upload; a node with `dev_install_root` set refuses (403).
   */
  async installBundle(
    bundle: Uint8Array | Blob,
    options: CallOptions & { onProgress?: (loaded: number, total: number) => void } = {},
  ): Promise<{ applicationId: string }> {
    const { onProgress, ...call } = options;
    const total = bundle instanceof Uint8Array ? bundle.byteLength : bundle.size;
    onProgress?.(0, total);
    const response = await this.http.send('/admin-api/install-dev-application/bundle', {
      timeoutMs: INSTALL_TIMEOUT_MS,
      ...call,
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', ...call.headers },
      rawBody: bundle as BodyInit,
      ...(onProgress ? { onUploadProgress: (loaded: number) => onProgress(Math.min(loaded, total), total) } : {}),
    });
    onProgress?.(total, total);
    return installed(response, this.data(response));
  }

  /**
   * hearth: `PUT /admin-api/dev-bundle` — bundles a raw WebAssembly module into a `.mpk` signed
   * with the node's development key (kept in its home) and answers the bundle; it installs nothing
   * (install the answer with {@link installBundle}). A node with `dev_install_root` set refuses (403).
   */
  async bundleDev(
    wasm: Uint8Array | Blob,
    manifest: { package: string; version: string; name?: string },
    options: CallOptions = {},
  ): Promise<{ bundle: Uint8Array; applicationId: string }> {
    const res = await this.http.stream('/admin-api/dev-bundle', {
      timeoutMs: INSTALL_TIMEOUT_MS,
      ...options,
      method: 'PUT',
      query: { package: manifest.package, version: manifest.version, name: manifest.name },
      headers: { 'content-type': 'application/octet-stream', ...options.headers },
      rawBody: wasm as BodyInit,
    });
    const bundle = new Uint8Array(await res.arrayBuffer());
    return { bundle, applicationId: res.headers.get('x-hearth-application-id') ?? '' };
  }

  /** `DELETE /admin-api/applications/{id}`; uninstalling an absent application succeeds too. */
  async uninstall(applicationId: string, options?: CallOptions): Promise<{ applicationId: string }> {
    const response = await this.http.send(`/admin-api/applications/${seg(applicationId)}`, { ...options, method: 'DELETE' });
    return installed(response, this.data(response));
  }

  /** `GET /admin-api/applications` → `data.apps`. */
  async list(options?: CallOptions): Promise<Application[]> {
    const response = await this.http.send('/admin-api/applications', options);
    const data = this.data(response);
    if (!isObject(data) || !Array.isArray(data.apps)) throw shape(response, 'expected {"data": {"apps": [...]}}');
    return data.apps as Application[];
  }

  /** `GET /admin-api/applications/{id}` → `data.application` (404 HttpError when absent). */
  async get(applicationId: string, options?: CallOptions): Promise<Application> {
    const response = await this.http.send(`/admin-api/applications/${seg(applicationId)}`, options);
    const data = this.data(response);
    if (!isObject(data) || !isObject(data.application)) throw shape(response, 'expected {"data": {"application": {...}}}');
    return data.application as unknown as Application;
  }

  /** `GET /admin-api/applications/{id}/abi[?service_name=]` → the embedded ABI, or null when it has none. */
  async abi(applicationId: string, options: AbiOptions = {}): Promise<Record<string, unknown> | null> {
    const { serviceName, ...call } = options;
    const response = await this.http.send(`/admin-api/applications/${seg(applicationId)}/abi`, {
      ...call,
      query: { service_name: serviceName },
    });
    const data = this.data(response);
    if (data !== null && !isObject(data)) throw shape(response, 'expected {"data": <ABI object> | null}');
    return data;
  }

  /** `GET /admin-api/applications/{id}/versions` → the retained versions, newest first. */
  async versions(applicationId: string, options?: CallOptions): Promise<ApplicationVersionEntry[]> {
    const response = await this.http.send(`/admin-api/applications/${seg(applicationId)}/versions`, options);
    const data = this.data(response);
    if (!Array.isArray(data)) throw shape(response, 'expected {"data": [...]}');
    return data as ApplicationVersionEntry[];
  }

  /** `GET /admin-api/packages` → flat `{packages}`. */
  async packages(options?: CallOptions): Promise<string[]> {
    const response = await this.http.send('/admin-api/packages', options);
    return strings(response, this.http.decode(response), 'packages');
  }

  /** `GET /admin-api/packages/{p}/versions` → flat `{versions}`. */
  async packageVersions(pkg: string, options?: CallOptions): Promise<string[]> {
    const response = await this.http.send(`/admin-api/packages/${seg(pkg)}/versions`, options);
    return strings(response, this.http.decode(response), 'versions');
  }

  /** `GET /admin-api/packages/{p}/latest` → flat `{applicationId, version}`, both null when unknown. */
  async latest(pkg: string, options?: CallOptions): Promise<LatestVersion> {
    const response = await this.http.send(`/admin-api/packages/${seg(pkg)}/latest`, options);
    const body = this.http.decode(response);
    if (!isObject(body) || !('applicationId' in body) || !('version' in body)) {
      throw shape(response, 'expected flat {"applicationId": …, "version": …}');
    }
    const { applicationId, version } = body;
    if ((applicationId !== null && typeof applicationId !== 'string') || (version !== null && typeof version !== 'string')) {
      throw shape(response, 'applicationId and version must be strings or null');
    }
    return { applicationId, version };
  }

  private data(response: HttpResponse): unknown {
    const body = this.http.decode(response);
    if (!isObject(body) || !('data' in body)) throw shape(response, 'expected a {"data": …} envelope');
    return body.data;
  }
}

function installed(response: HttpResponse, data: unknown): { applicationId: string } {
  if (!isObject(data) || typeof data.applicationId !== 'string') throw shape(response, 'expected {"data": {"applicationId": "…"}}');
  return { applicationId: data.applicationId };
}

function strings(response: HttpResponse, body: unknown, key: string): string[] {
  const list = isObject(body) ? body[key] : undefined;
  if (!Array.isArray(list) || !list.every((v) => typeof v === 'string')) throw shape(response, `expected flat {"${key}": [string…]}`);
  return list;
}

const seg = (s: string): string => encodeURIComponent(s);

function shape(response: HttpResponse, detail: string): DecodeError {
  return new DecodeError(response.method, response.url, response.status, response.bodyText, detail);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
