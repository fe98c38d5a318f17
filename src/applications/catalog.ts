/**
 * The application catalog: what other domains (contexts, the runtime, upgrades, tee, delegation)
 * ask of the installed-applications registry (admin spec "Applications and packages"; admin-wire-a
 * §3; runtime.md §1, §4). `ApplicationService` implements it.
 */

/** admin-wire-a §3.2 `Application` as stored; the routes shape it for the wire. */
export interface InstalledApplication {
  /** 64 hex: SHA-256 of borsh(package, signerId) for bundles */
  id: string;
  /** blob id (64 hex) of the whole `.mpk` */
  bundleBlobId: string;
  size: number;
  /** where it came from (a path or a registry URL) */
  source: string;
  package: string;
  version: string;
  signerId: string;
  /** service names of a multi-service bundle; empty for the single-service form */
  services: string[];
  /** Unix milliseconds */
  installedAt: number;
}

/** One installed version of an application, named by its bundle blob id (what a context pins). */
export interface InstalledRelease {
  applicationId: string;
  package: string;
  signerId: string;
  version: string;
  /** blob id (64 hex) of this version's `.mpk` */
  bundleBlobId: string;
  services: string[];
}

export interface ApplicationCatalog {
  get(applicationId: string): Promise<InstalledApplication | null>;
  /**
   * The wasm of the application (of `service` for multi-service bundles), extracted from the bundle
   * blob and re-checked against the manifest digest. Unknown application → HearthError notFound.
   */
  wasm(applicationId: string, service?: string): Promise<Uint8Array>;
  /** the embedded `calimero_abi_v1` ABI parsed, or null when the wasm carries none */
  abi(applicationId: string, service?: string): Promise<unknown | null>;
  /** names of the methods the embedded ABI marks `"intent": "read_only"` */
  readOnlyMethods(applicationId: string, service?: string): Promise<Set<string>>;
  /**
   * The wasm of one installed version, named by its bundle blob id (`InstalledApplication.bundleBlobId`
   * at the time a context was activated): installing a newer version keeps the application id, and
   * every installed version stays available until the application is uninstalled. Unknown → notFound.
   * (Added by the applications domain; optional so existing fakes of this catalog stay valid.)
   */
  wasmOfVersion?(bundleBlobId: string, service?: string): Promise<Uint8Array>;
  /** The installed version whose bundle is `bundleBlobId`, or null. (Optional, as `wasmOfVersion`.) */
  installedRelease?(bundleBlobId: string): Promise<InstalledRelease | null>;
  /** Every installed version of an application, newest first; empty when it is not installed. */
  releases?(applicationId: string): Promise<InstalledRelease[]>;
  /** The embedded ABI of one installed version, or null when its wasm carries none. Unknown → notFound. */
  abiOfVersion?(bundleBlobId: string, service?: string): Promise<unknown | null>;
  /** `readOnlyMethods` of one installed version. Unknown → notFound. */
  readOnlyMethodsOfVersion?(bundleBlobId: string, service?: string): Promise<Set<string>>;
  /**
   * Without waiting, when the answer is in memory (issue #33: a method call's lookups): whether the
   * application is installed (as `get` answering non-null), and the version's read-only methods (as
   * `readOnlyMethodsOfVersion`); undefined when the async method must be asked.
   */
  installedNow?(applicationId: string): boolean | undefined;
  readOnlyMethodsOfVersionNow?(bundleBlobId: string, service?: string): Set<string> | undefined;
}
