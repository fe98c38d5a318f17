/**
 * Account device ops written into a namespace's governance log (admin-wire-b §2.14, §3.4–§3.6):
 * binding a device of the author's account (it may then write for that account here), unbinding it
 * when its scope no longer covers the namespace, and revoking it (forward-only: ops it already
 * signed stay valid). An account manages only its own devices, and only in namespaces it takes
 * part in.
 */
import { badRequest, conflict, forbidden } from '../errors.ts';
import { type ApplierRegistry, type ApplyContext, type DeviceBinding, isMember, recordAccountRoot } from '../governance/index.ts';
import { parseCredential, parseScopeProof } from '../identity/credentials.ts';

export interface DeviceOpBody {
  account: string;
  deviceId: string;
  /** for `account.device.linked` */
  signingKey?: string;
}

function checked({ ns, op }: ApplyContext): { body: DeviceOpBody; bindings: Record<string, DeviceBinding> } {
  const body = op.body as unknown as DeviceOpBody;
  if (body.account !== op.account) throw forbidden(`account ${op.account} may only manage its own devices, not those of ${body.account}`);
  if (!Object.values(ns.groups).some((g) => isMember(ns, g, op.account))) {
    throw forbidden(`account ${op.account} is not a member of namespace '${ns.id}'`);
  }
  ns.deviceBindings ??= {};
  const bindings = (ns.deviceBindings[op.account] ??= {});
  return { body, bindings };
}

export function registerDeviceOps(registry: ApplierRegistry): void {
  registry.register('account.device.linked', (ctx) => {
    const endorsed = ctx.op.body as { credential?: unknown; scope?: unknown };
    if (endorsed.credential !== undefined) return linkEndorsed(ctx, String(endorsed.credential), String(endorsed.scope ?? ''));
    const { body, bindings } = checked(ctx);
    if (!body.signingKey || !/^[0-9a-f]{64}$/.test(body.signingKey)) throw badRequest('device signing key must be 64 hex');
    const current = bindings[body.deviceId];
    if (current?.revokedAt !== undefined) throw forbidden(`device ${body.deviceId} is revoked (DeviceLinkRefused)`);
    if (current) throw conflict(`device ${body.deviceId} is already bound in namespace '${ctx.ns.id}'`);
    bindings[body.deviceId] = { signingKey: body.signingKey, linkedAt: ctx.op.timestampMs };
    ctx.emit(ctx.ns.id, 'AccountDeviceLinked', { account: body.account, deviceId: body.deviceId });
  });

  registry.register('account.device.unlinked', (ctx) => {
    const { body, bindings } = checked(ctx);
    if (!bindings[body.deviceId] || bindings[body.deviceId].revokedAt !== undefined) {
      throw conflict(`device ${body.deviceId} holds no live binding in namespace '${ctx.ns.id}'`);
    }
    delete bindings[body.deviceId];
    ctx.emit(ctx.ns.id, 'AccountDeviceUnlinked', { account: body.account, deviceId: body.deviceId });
  });

  registry.register('account.device.revoked', (ctx) => {
    const { body, bindings } = checked(ctx);
    const current = bindings[body.deviceId];
    bindings[body.deviceId] = { signingKey: current?.signingKey ?? '', linkedAt: current?.linkedAt ?? ctx.op.timestampMs, revokedAt: ctx.op.timestampMs };
    ctx.emit(ctx.ns.id, 'AccountDeviceRevoked', { account: body.account, deviceId: body.deviceId });
  });
}

/**
 * A member carries the link of a device of any account (admin-wire-b §2.15): the credential and
 * scope proof verify from their bytes, the device's account must take part in the namespace and its
 * scope must cover the namespace's application.
 */
function linkEndorsed(ctx: ApplyContext, credential: string, scope: string): void {
  const { ns, op } = ctx;
  const cred = parseCredential(credential);
  const sc = parseScopeProof(scope);
  if (sc.accountId !== cred.accountId || sc.deviceId !== cred.deviceId) throw badRequest("scope does not name the credential's device (DeviceLinkInvalid)");
  const groups = Object.values(ns.groups);
  if (!groups.some((g) => isMember(ns, g, op.account))) throw forbidden(`account ${op.account} is not a member of namespace '${ns.id}'`);
  if (!groups.some((g) => isMember(ns, g, cred.accountId))) {
    throw forbidden(`account ${cred.accountId} takes no part in namespace '${ns.id}' (DeviceLinkRefused)`);
  }
  const app = ns.groups[ns.id]?.targetApplicationId ?? ns.targetApplicationId;
  if (sc.applications.length > 0 && !sc.applications.includes(app)) {
    throw forbidden(`the device's scope does not cover application ${app} of namespace '${ns.id}' (DeviceLinkRefused)`);
  }
  ns.deviceBindings ??= {};
  const bindings = (ns.deviceBindings[cred.accountId] ??= {});
  const current = bindings[cred.deviceId];
  if (current?.revokedAt !== undefined) throw forbidden(`device ${cred.deviceId} is revoked (DeviceLinkRefused)`);
  if (current) throw conflict(`device ${cred.deviceId} is already bound in namespace '${ns.id}'`);
  bindings[cred.deviceId] = { signingKey: cred.signingKey, linkedAt: op.timestampMs };
  recordAccountRoot(ns, cred.rootPublicKey);
  ctx.emit(ns.id, 'AccountDeviceLinked', { account: cred.accountId, deviceId: cred.deviceId, endorsedBy: op.account });
}
