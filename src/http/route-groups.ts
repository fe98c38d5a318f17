/**
 * A domain's routes as its face hands them to the composition root: named groups, each mounting
 * its routes from the deps the face closed over. `src/node/routes.ts` (the route table) mounts them
 * behind the guard, in its order (docs/architecture.md "Where a new domain plugs in"). A type only:
 * src/http/ knows no domain.
 */
import type { FastifyInstance } from 'fastify';

/** Mounts a group of routes; called once, when the HTTP app is built. */
export type MountRoutes = (app: FastifyInstance) => void;

/** A domain's route groups by name (most domains have one, named after the domain); names are unique in the node. */
export type RouteGroups = Readonly<Record<string, MountRoutes>>;
