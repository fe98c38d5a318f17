/** Request schemas of the root-guarded owner routes (admin-wire-b §5.1, §2.13). */
import { Type } from 'typebox';

/** Ids are checked by the route (400 with the reference's message), so they are plain strings here. */
export const TransferOwnershipRequest = Type.Object({
  newOwner: Type.String(),
  rootProof: Type.Optional(Type.String()),
});

/** Documentation only: owner-delete reads `{rootProof?}` by hand (no body and `{}` mean no proof). */
export const OwnerDeleteRequest = Type.Object({
  rootProof: Type.Optional(Type.String({ description: 'hex of a SignedOwnerOp; omit it to let this node sign with the root it holds' })),
});

export const ChangeAdminRequest = Type.Object({
  newAdmin: Type.String(),
  rootProof: Type.Optional(Type.String()),
});
