/**
 * Schemas of the delegated-execution routes (admin spec "Delegated execution", "Delegated creation
 * and governance"; admin-wire-b §8). Request bodies are read by the services (u64-exact JSON, hex
 * fields whose 400s name the rule), so the request schemas here document and do not validate.
 */
import { Type } from 'typebox';
import { Data, Hex32 } from '../http/response-schemas.ts';

const warrant = (what: string) => Type.String({ description: `hex of the borsh ${what}, signed by the author's device` });
const authorProof = Type.String({ description: "hex of the borsh AccountProof<DeviceCert> tying the author's device key to the author account" });

export const PerformIntentRequest = Type.Object({
  method: Type.String(),
  argsJson: Type.Optional(Type.Unknown({ description: 'the arguments as the guest receives them (absent: {})' })),
  warrant: warrant('Warrant'),
  authorProof,
});
export const CreateContextIntentRequest = Type.Object({
  warrant: warrant('ContextCreationWarrant'),
  authorProof,
  initArgs: Type.Optional(Type.Unknown({ description: 'the JSON init runs with (absent: {})' })),
});
export const GovernanceIntentRequest = Type.Object({
  warrant: warrant('GovernanceWarrant'),
  authorProof,
  op: Type.String({ description: 'hex of the delegable op: UTF-8 JSON {kind, groupId?, body} (docs/governance.md "Governance intents")' }),
});

export const AuthorQuery = Type.Object({ author: Type.Optional(Type.String({ description: 'an account (64 hex): also answer whether it may create contexts here' })) });

export const PerformIntentAnswer = Data(
  Type.Object({ rootHash: Hex32('the context’s state hash after the run'), returns: Type.Unknown({ description: 'the method’s return value (null for none)' }) }),
);
export const ContextIntentRelayAnswer = Data(
  Type.Object({
    executorAccount: Hex32(),
    executorKey: Hex32('the one device of this node that spends warrants'),
    groupId: Hex32(),
    canCreateOnBehalf: Type.Boolean(),
    authorMayCreate: Type.Optional(Type.Boolean()),
  }),
);
export const CreateContextIntentAnswer = Data(Type.Object({ contextId: Hex32(), groupId: Hex32(), memberPublicKey: Hex32() }));
export const GovernanceIntentRelayAnswer = Data(Type.Object({ executorAccount: Hex32(), executorKey: Hex32(), groupId: Hex32(), canActOnBehalf: Type.Boolean() }));
export const GovernanceIntentAnswer = Data(Type.Object({ groupId: Hex32('the scope group, or the subgroup a GroupCreated op created') }));
