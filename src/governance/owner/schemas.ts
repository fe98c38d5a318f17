/** Request schemas of the root-guarded owner routes (admin-wire-b §5.1, §2.13). */
import { Type } from 'typebox';

/** Ids are checked by the route (400 with the reference's message), so they are plain strings here. */
export const TransferOwnershipRequest = Type.Object({
  newOwner: Type.String(),
  rootProof: Type.Optional(Type.String()),
});

export const ChangeAdminRequest = Type.Object({
  newAdmin: Type.String(),
  rootProof: Type.Optional(Type.String()),
});

export const GroupParams = Type.Object({ groupId: Type.String() });
export const NamespaceParams = Type.Object({ namespaceId: Type.String() });
