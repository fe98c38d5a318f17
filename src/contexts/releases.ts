/**
 * Which version of its application a context runs (admin-wire-a §3.3 item 7: "contexts keep running
 * the blob they were activated with"; domain.md §4.6). A context pins the bundle of the version it
 * was created or joined with (`ContextMeta.bundleBlobId`); installing a newer version changes
 * nothing until a group upgrade moves the context (src/upgrades). A context stored before pinning
 * existed runs the application's current version, as it always did.
 */
import type { ApplicationCatalog } from '../applications/index.ts';
import type { GroupState } from '../governance/index.ts';
import type { ContextMeta } from './types.ts';

export interface Release {
  bundleBlobId: string;
  version: string;
}

const UNRESOLVED = /^0{64}$/;

/** The release a context runs, or null when its application is not installed here. */
export async function releaseOf(apps: ApplicationCatalog, meta: Pick<ContextMeta, 'applicationId' | 'bundleBlobId'>): Promise<Release | null> {
  if (meta.bundleBlobId && apps.installedRelease) {
    const pinned = await apps.installedRelease(meta.bundleBlobId);
    if (pinned) return { bundleBlobId: pinned.bundleBlobId, version: pinned.version };
  }
  const app = await apps.get(meta.applicationId);
  return app ? { bundleBlobId: app.bundleBlobId, version: app.version } : null;
}

/**
 * The release a new context of `group` starts on: the version the group pins (`appKey`, moved by
 * upgrades) when it is installed here and of this application, else the installed current version.
 */
export async function releaseForGroup(apps: ApplicationCatalog, group: Pick<GroupState, 'appKey'>, applicationId: string): Promise<Release | null> {
  if (!UNRESOLVED.test(group.appKey) && apps.installedRelease) {
    const pinned = await apps.installedRelease(group.appKey);
    if (pinned && pinned.applicationId === applicationId) return { bundleBlobId: pinned.bundleBlobId, version: pinned.version };
  }
  return releaseOf(apps, { applicationId });
}

/** The wasm a context runs. */
export function wasmOf(apps: ApplicationCatalog, meta: ContextMeta): Promise<Uint8Array> {
  return meta.bundleBlobId && apps.wasmOfVersion ? apps.wasmOfVersion(meta.bundleBlobId, meta.serviceName) : apps.wasm(meta.applicationId, meta.serviceName);
}

/** `readOnlyOf` without waiting when the catalog has the answer in memory; undefined otherwise. */
export function readOnlyNow(apps: ApplicationCatalog, meta: ContextMeta): Set<string> | undefined {
  return meta.bundleBlobId && apps.readOnlyMethodsOfVersion ? apps.readOnlyMethodsOfVersionNow?.(meta.bundleBlobId, meta.serviceName) : undefined;
}

/** The methods the ABI of the context's version marks read-only. */
export function readOnlyOf(apps: ApplicationCatalog, meta: ContextMeta): Promise<Set<string>> {
  return meta.bundleBlobId && apps.readOnlyMethodsOfVersion
    ? apps.readOnlyMethodsOfVersion(meta.bundleBlobId, meta.serviceName)
    : apps.readOnlyMethods(meta.applicationId, meta.serviceName);
}
