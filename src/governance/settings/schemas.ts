/**
 * Request and response schemas of the settings family (admin-wire-b §6.2–§6.6). Value rules (mask
 * range, visibility spelling, metadata limits, TEE policy forms) live in `validate.ts` and run in
 * the appliers, so the schemas only fix the shapes; fields older clients send are accepted and
 * ignored (README precedence rule 3). Response schemas document the wire (OpenAPI) only.
 */
import { Type } from 'typebox';
import { Data } from '../../http/response-schemas.ts';
import { MetadataRecord } from '../groups/schemas.ts';

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

/** Documentation only: the DELETE reads `{rootProof?}` by hand (no body and `{}` mean no proof). */
export const OptionalRootProof = Type.Object({
  rootProof: Type.Optional(Type.String({ description: 'hex of a SignedOwnerOp; omit it to let this node sign with the root it holds' })),
});

// ---- responses ------------------------------------------------------------------------------------

export const CapabilitiesAnswer = Data(
  Type.Object({ capabilities: Type.Integer({ minimum: 0, description: 'u32 mask: the member’s override, else the group default' }) }),
);

/** `{"data": MetadataRecord}`, or `{"data": null}` while none is set (admin-wire-b §6.6). */
export const MetadataAnswer = Data(Type.Union([MetadataRecord, Type.Null()], { description: 'null until set' }));

const Strings = Type.Array(Type.String());

/** GetTeeAdmissionPolicy, flat (admin-wire-b §6.4): `enabled: false` and empty lists when none is set. */
export const TeeAdmissionPolicyAnswer = Type.Object({
  enabled: Type.Boolean(),
  allowedMrtd: Strings,
  allowedRtmr0: Strings,
  allowedRtmr1: Strings,
  allowedRtmr2: Strings,
  allowedRtmr3: Strings,
  allowedTcbStatuses: Strings,
  acceptMock: Type.Boolean(),
  signedRelease: Type.Optional(
    Type.Object({ allowedProfiles: Strings, minReleaseVersion: Type.Optional(Type.String()) }, { description: 'only in the signed-release form' }),
  ),
  mode: Type.Union([Type.Literal('replica'), Type.Literal('relay')]),
});
