/**
 * The bundle manifest (`manifest.json`, camelCase; runtime.md §1 "Manifest fields", admin-wire-a
 * §3.3 step 2): its typed view and the structural rules the node enforces before trusting any
 * artifact — required fields, safe package/version names, safe artifact paths, `minRuntimeVersion`.
 * Unknown fields are allowed (and signed); the typed view ignores them.
 */
import { badRequest } from '../errors.ts';
import { RUNTIME_VERSION } from './constants.ts';
import { compareSemver, parseSemver } from './semver.ts';

export interface BundleArtifact {
  path: string;
  /** hex SHA-256 of the artifact bytes */
  hash: string;
  size: number;
}

export interface BundleService {
  name: string;
  wasm: BundleArtifact;
  abi?: BundleArtifact;
}

export interface BundleMetadata {
  name: string;
  description?: string;
  author?: string;
  icon?: string;
  tags: string[];
  license?: string;
}

export interface BundleManifest {
  version: string;
  package: string;
  appVersion: string;
  signerId: string;
  minRuntimeVersion: string;
  metadata?: BundleMetadata;
  links?: { frontend?: string; github?: string; docs?: string };
  wasm?: BundleArtifact;
  abi?: BundleArtifact;
  services: BundleService[];
}

/** One wasm the bundle declares: the top-level one (`name` null) or a named service's. */
export interface WasmArtifact {
  name: string | null;
  wasm: BundleArtifact;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(o: Obj, key: string, where: string, required: true): string;
function str(o: Obj, key: string, where: string, required: false): string | undefined;
function str(o: Obj, key: string, where: string, required: boolean): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) {
    if (required) throw badRequest(`bundle manifest: ${where}${key} is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw badRequest(`bundle manifest: ${where}${key} must be a string`);
  return v;
}

/** A single safe path component: non-empty, no `/`, `\`, NUL, and not `.` or `..`. */
export function checkComponent(value: string, field: string): string {
  if (value === '' || value.trim() !== value) throw badRequest(`${field} must be a non-empty name without surrounding spaces`);
  if (/[/\\\0]/.test(value) || value === '.' || value === '..' || value.includes('..')) {
    throw badRequest(`${field} ${JSON.stringify(value)} must not contain "..", "/", "\\" or NUL`);
  }
  return value;
}

/** Artifact paths are relative, non-empty, without `..` segments, backslashes, NUL or a drive letter. */
export function checkArtifactPath(path: string, field: string): string {
  const bad =
    path === '' ||
    path.startsWith('/') ||
    path.includes('\\') ||
    path.includes('\0') ||
    /^[A-Za-z]:/.test(path) ||
    path.split('/').some((seg) => seg === '..');
  if (bad) throw badRequest(`bundle manifest: ${field}.path ${JSON.stringify(path)} is not a safe relative path`);
  return path.replace(/^(\.\/)+/, '');
}

function artifact(v: unknown, field: string): BundleArtifact {
  if (!isObj(v)) throw badRequest(`bundle manifest: ${field} must be an object {path, hash, size}`);
  const path = checkArtifactPath(str(v, 'path', `${field}.`, true), field);
  const hash = str(v, 'hash', `${field}.`, true);
  if (!/^[0-9a-fA-F]{64}$/.test(hash)) throw badRequest(`bundle manifest: ${field}.hash must be a hex SHA-256`);
  const size = v.size;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
    throw badRequest(`bundle manifest: ${field}.size must be a non-negative integer`);
  }
  return { path, hash: hash.toLowerCase(), size };
}

function metadataOf(v: unknown): BundleMetadata | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw badRequest('bundle manifest: metadata must be an object');
  const tags = v.tags ?? [];
  if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string')) throw badRequest('bundle manifest: metadata.tags must be a list of strings');
  return {
    name: str(v, 'name', 'metadata.', true),
    description: str(v, 'description', 'metadata.', false),
    author: str(v, 'author', 'metadata.', false),
    icon: str(v, 'icon', 'metadata.', false),
    tags: tags as string[],
    license: str(v, 'license', 'metadata.', false),
  };
}

function linksOf(v: unknown): BundleManifest['links'] {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw badRequest('bundle manifest: links must be an object');
  return { frontend: str(v, 'frontend', 'links.', false), github: str(v, 'github', 'links.', false), docs: str(v, 'docs', 'links.', false) };
}

/**
 * The typed view of a manifest object, enforcing the structural rules. `runtimeVersion` is the
 * release `minRuntimeVersion` must not exceed (null: only its syntax is checked, as when building).
 */
export function parseManifest(raw: unknown, runtimeVersion: string | null = RUNTIME_VERSION): BundleManifest {
  if (!isObj(raw)) throw badRequest('bundle manifest: manifest.json must hold a JSON object');
  const pkg = checkComponent(str(raw, 'package', '', true), 'bundle manifest: package');
  const appVersion = checkComponent(str(raw, 'appVersion', '', true), 'bundle manifest: appVersion');
  const minRuntimeVersion = str(raw, 'minRuntimeVersion', '', true);
  const min = parseSemver(minRuntimeVersion);
  if (!min) throw badRequest(`bundle manifest: minRuntimeVersion ${JSON.stringify(minRuntimeVersion)} is not a semantic version`);
  if (runtimeVersion !== null && compareSemver(min, parseSemver(runtimeVersion)!) > 0) {
    throw badRequest(`bundle needs runtime ${minRuntimeVersion} or newer; this node provides ${runtimeVersion}`);
  }
  const servicesRaw = raw.services ?? [];
  if (!Array.isArray(servicesRaw)) throw badRequest('bundle manifest: services must be a list');
  const services = servicesRaw.map((s, i): BundleService => {
    if (!isObj(s)) throw badRequest(`bundle manifest: services[${i}] must be an object`);
    const name = checkComponent(str(s, 'name', `services[${i}].`, true), `bundle manifest: services[${i}].name`);
    return { name, wasm: artifact(s.wasm, `services[${i}].wasm`), abi: s.abi == null ? undefined : artifact(s.abi, `services[${i}].abi`) };
  });
  const names = new Set(services.map((s) => s.name));
  if (names.size !== services.length) throw badRequest('bundle manifest: service names must be unique');
  const manifest: BundleManifest = {
    version: str(raw, 'version', '', true),
    package: pkg,
    appVersion,
    signerId: str(raw, 'signerId', '', true),
    minRuntimeVersion,
    metadata: metadataOf(raw.metadata),
    links: linksOf(raw.links),
    wasm: raw.wasm == null ? undefined : artifact(raw.wasm, 'wasm'),
    abi: raw.abi == null ? undefined : artifact(raw.abi, 'abi'),
    services,
  };
  if (wasmArtifacts(manifest).length === 0) throw badRequest('bundle manifest declares no wasm artifact (wasm or services[].wasm)');
  return manifest;
}

/** The wasm artifacts that count: the services' when `services` is non-empty, else the top-level one. */
export function wasmArtifacts(m: BundleManifest): WasmArtifact[] {
  if (m.services.length > 0) return m.services.map((s) => ({ name: s.name, wasm: s.wasm }));
  return m.wasm ? [{ name: null, wasm: m.wasm }] : [];
}

const isWebUrl = (u: string | undefined): u is string => !!u && /^https?:\/\/\S/i.test(u) && !/[\0-\x1f\x7f]/.test(u);

/**
 * The stored `Application.metadata` bytes (admin-wire-a §3.3 step 6): UTF-8 JSON of
 * `{package, version, name, description?, author?, icon?, tags?, license?, links?}` in that order;
 * only http(s) links are kept, since clients open them.
 */
export function metadataJson(m: BundleManifest): string {
  const out: Record<string, unknown> = { package: m.package, version: m.appVersion };
  if (m.metadata) {
    out.name = m.metadata.name;
    for (const k of ['description', 'author', 'icon'] as const) if (m.metadata[k] !== undefined) out[k] = m.metadata[k];
    if (m.metadata.tags.length > 0) out.tags = m.metadata.tags;
    if (m.metadata.license !== undefined) out.license = m.metadata.license;
  }
  if (m.links) {
    const links: Record<string, string> = {};
    for (const k of ['frontend', 'github', 'docs'] as const) if (isWebUrl(m.links[k])) links[k] = m.links[k]!;
    if (Object.keys(links).length > 0) out.links = links;
  }
  return JSON.stringify(out);
}
