/** Context shapes (admin spec "Context"; hearth's raw state reads). Imports nothing: see ./index.ts. */

/** admin spec "Context"; listings add `groupId` (ContextWithGroup). */
export interface Context {
  id: string;
  applicationId: string;
  serviceName?: string;
  /** 64 hex; 64 `f` characters before the context has any state on this node */
  contextStateHash: string;
  /** each head as 32 byte values; omitted when empty */
  dagHeads?: number[][];
  applicationVersion?: string;
  /** omitted unless the context was given a name */
  name?: string;
  /** in listings only (ContextWithGroup): the owning group */
  groupId?: string;
}

/** hearth: one raw state row of a context (`GET /contexts/{id}/raw-state`). */
export interface RawStateEntry {
  /** the guest's key, lowercase hex */
  key: string;
  /** bytes of the value */
  size: number;
  /** the value's first 64 bytes: text when they are printable UTF-8, else hex */
  preview: string;
  previewEncoding: 'utf8' | 'hex';
}

/** hearth: a page of raw state rows; pass `next` as `after` for the following page (null: the last). */
export interface RawStatePage {
  entries: RawStateEntry[];
  next: string | null;
}

/** hearth: one raw state row's value (`GET /contexts/{id}/raw-state/value`). */
export interface RawStateValue {
  key: string;
  /** bytes of the whole value */
  size: number;
  encoding: 'base64';
  /** the value in base64: only its first 1 MiB when `truncated` */
  value: string;
  truncated: boolean;
}
