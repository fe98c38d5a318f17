/** `POST /admin-api/groups`'s body (admin spec "Groups"). Imports nothing: see ./index.ts. */
export interface CreateGroupRequest {
  applicationId: string;
  /** bytecode (blob) id the group pins; older clients call it `bytecodeId` */
  appKey?: string;
  name?: string;
  /** absent: a new namespace is founded; present: a subgroup of that group */
  parentGroupId?: string;
  /** absent means open (admin spec) */
  visibility?: 'open' | 'restricted';
}
