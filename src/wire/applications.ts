/** Application version listings (admin spec "Applications"). Imports nothing: see ./index.ts. */
export interface ApplicationVersionEntry {
  version: string;
  blobId: string;
  size: number;
  package: string;
}

export interface LatestVersion {
  applicationId: string | null;
  version: string | null;
}
