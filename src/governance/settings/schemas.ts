/**
 * Request schemas of the settings family (admin-wire-b §6.2–§6.6). Value rules (mask range,
 * visibility spelling, metadata limits, TEE policy forms) live in `validate.ts` and run in the
 * appliers, so the schemas only fix the shapes; fields older clients send are accepted and ignored
 * (README precedence rule 3).
 */
import { Type } from 'typebox';

export { ContextParams, GroupParams, MemberParams } from '../groups/members-schemas.ts';

export const SetCapabilitiesRequest = Type.Object({ capabilities: Type.Integer() });
export const SetDefaultCapabilitiesRequest = Type.Object({ defaultCapabilities: Type.Integer() });
export const SetVisibilityRequest = Type.Object({ subgroupVisibility: Type.String() });

export const SetMetadataRequest = Type.Object({
  name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  data: Type.Optional(Type.Record(Type.String(), Type.String())),
});

const StringList = Type.Optional(Type.Array(Type.String()));

export const SetTeeAdmissionPolicyRequest = Type.Object({
  allowedMrtd: StringList,
  allowedRtmr0: StringList,
  allowedRtmr1: StringList,
  allowedRtmr2: StringList,
  allowedRtmr3: StringList,
  allowedTcbStatuses: StringList,
  acceptMock: Type.Optional(Type.Boolean()),
  signedRelease: Type.Optional(
    Type.Union([
      Type.Object({ allowedProfiles: StringList, minReleaseVersion: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
      Type.Null(),
    ]),
  ),
  mode: Type.Optional(Type.String()),
  rootProof: Type.Optional(Type.String()),
});

export const SetTeeAuthoringPolicyRequest = Type.Object({
  allowedMrtd: StringList,
  rootProof: Type.Optional(Type.String()),
});
