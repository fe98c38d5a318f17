/**
 * Upgrade and migration routes (admin spec "Sync, upgrades and migration"; admin-wire-b §7): parse,
 * call, shape. `migration-status` and `migration/abort` answer flat, as the reference; the others
 * `{data: …}`. Retry and abort take an optional body, read by no one: absent, empty or `{}`.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { requireId } from '../crypto/ids.ts';
import { emptyJsonAsNoBody } from '../http/body.ts';
import { Errors } from '../http/response-schemas.ts';
import { GroupParams } from '../governance/index.ts';
import { AbortAnswer, CascadeStatusAnswer, MigrationStatusAnswer, UpgradeAnswer, UpgradeGroupRequest, UpgradeStatusAnswer } from './schemas.ts';
import type { UpgradeService } from './service.ts';

const AUTH = [401, 403];
const groupIdOf = (p: { groupId: string }) => requireId(p.groupId, 'group id');

export function registerUpgradeRoutes(root: FastifyInstance, deps: { upgrades: UpgradeService }): void {
  void root.register(async (scope) => {
    emptyJsonAsNoBody(scope);
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    const { upgrades } = deps;

    app.post(
      '/admin-api/groups/:groupId/upgrade',
      {
        schema: {
          summary: 'Upgrade a group (and with cascade its subgroups) to a newer version of its application',
          params: GroupParams,
          body: UpgradeGroupRequest,
          response: { 200: UpgradeAnswer, ...Errors(400, ...AUTH, 404, 409) },
        },
      },
      async (req) => {
        const b = req.body;
        return {
          data: await upgrades.upgrade(groupIdOf(req.params), {
            targetApplicationId: requireId(b.targetApplicationId, 'targetApplicationId'),
            cascade: b.cascade,
            forceCodeOnly: b.forceCodeOnly,
            version: b.version,
          }),
        };
      },
    );

    app.get(
      '/admin-api/groups/:groupId/upgrade/status',
      { schema: { summary: 'The group’s latest upgrade as this node sees it, or null', params: GroupParams, response: { 200: UpgradeStatusAnswer, ...Errors(400, ...AUTH, 404) } } },
      async (req) => ({ data: await upgrades.status(groupIdOf(req.params)) }),
    );

    app.post(
      '/admin-api/groups/:groupId/upgrade/retry',
      { schema: { summary: 'Migrate this node’s failed contexts of the group again', params: GroupParams, response: { 200: UpgradeAnswer, ...Errors(400, ...AUTH, 404, 409) } } },
      async (req) => ({ data: await upgrades.retry(groupIdOf(req.params)) }),
    );

    app.get(
      '/admin-api/groups/:groupId/migration-status',
      { schema: { summary: 'Migration of a namespace across its members (flat; the id is the namespace’s)', params: GroupParams, response: { 200: MigrationStatusAnswer, ...Errors(400, ...AUTH, 404) } } },
      async (req) => upgrades.migrationStatus(groupIdOf(req.params)),
    );

    app.get(
      '/admin-api/groups/:groupId/cascade-status',
      { schema: { summary: 'Every upgraded group of a namespace (the id is the namespace’s)', params: GroupParams, response: { 200: CascadeStatusAnswer, ...Errors(400, ...AUTH, 404) } } },
      async (req) => ({ data: await upgrades.cascadeStatus(groupIdOf(req.params)) }),
    );

    app.post(
      '/admin-api/groups/:groupId/migration/abort',
      { schema: { summary: 'Abort the namespace’s pending migration (flat; idempotent)', params: GroupParams, response: { 200: AbortAnswer, ...Errors(400, ...AUTH, 404) } } },
      async (req) => upgrades.abort(groupIdOf(req.params)),
    );
  });
}
