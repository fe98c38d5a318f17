/**
 * The events domain's face: the live event stream (SSE sessions and WebSockets over the node's
 * bus), ephemeral presence per context (JSON-RPC `set_ephemeral`, replayed on subscribe) and the
 * relayed, device-signed presence of `POST /contexts/{id}/presence-intents` (docs/events.md).
 *
 * @example
 * const events = createEvents({ bus, clock, governance, contexts, logger });
 * events.routes.events(app);
 */
import type { Logger } from 'pino';
import type { EventBus } from '../bus.ts';
import type { Clock } from '../clock.ts';
import { contextRpcMethods, type Contexts, type RpcMethodHandler } from '../contexts/index.ts';
import { groupPathVia } from '../governance/index.ts';
import type { Governance } from '../governance/index.ts';
import type { GaugeSource } from '../http/metrics.ts';
import type { RouteGroups } from '../http/route-groups.ts';
import { contextApplicationVia } from './access.ts';
import { PresenceIntentService } from './presence-intents.ts';
import { presenceRpcMethods } from './presence-rpc.ts';
import { PresenceService } from './presence.ts';
import { registerEventRoutes } from './routes.ts';
import { EventStreamService } from './service.ts';

export interface EventsDeps {
  bus: EventBus;
  clock: Clock;
  governance: Governance;
  contexts: Contexts;
  logger: Logger;
}

export interface EventsDomain {
  readonly name: 'events';
  presence: PresenceService;
  /** the live event stream: SSE sessions and WebSockets over the bus */
  stream: EventStreamService;
  presenceIntents: PresenceIntentService;
  /** the live event stream (SSE sessions, the WebSocket) and the relayed presence intents */
  routes: RouteGroups;
  /** the JSON-RPC methods this domain adds to `POST /jsonrpc` (`set_ephemeral`) */
  contextRpcMethods: Record<string, RpcMethodHandler>;
  metrics(): Iterable<GaugeSource>;
  start(): void;
  beforeStop(): void;
}

export function createEvents(d: EventsDeps): EventsDomain {
  const { governance, contexts } = d;
  const presence = new PresenceService({ bus: d.bus, clock: d.clock });
  const presenceIntents = new PresenceIntentService({ presence, clock: d.clock, locateContext: (id) => contexts.contexts.registration(id) });
  const stream = new EventStreamService({
    bus: d.bus,
    presence,
    clock: d.clock,
    observe: {
      groupKnown: (id) => governance.locate(id) !== undefined,
      groupPath: groupPathVia((id) => governance.locate(id)),
      contextApplication: contextApplicationVia((id) => contexts.contexts.get(id)),
    },
    onDrop: (info) => d.logger.info(info, 'event stream connection dropped'),
  });
  return {
    name: 'events',
    presence,
    stream,
    presenceIntents,
    routes: { events: (app) => registerEventRoutes(app, { stream, rpcMethods: () => contextRpcMethods(contexts), presenceIntents }) },
    contextRpcMethods: presenceRpcMethods(presence, { ownIdentity: (id) => contexts.contexts.ownIdentity(id) }),
    metrics: () => [
      {
        name: 'hearth_event_streams_active',
        help: 'Open event-stream connections by transport',
        read: () => Object.entries(stream.activeStreams()).map(([transport, value]) => ({ labels: { transport }, value })),
      },
    ],
    start: () => {
      presence.start();
      stream.start();
    },
    // Streams end with a close frame first: open SSE responses would otherwise hold the drain.
    beforeStop: () => {
      stream.stop();
      presence.stop();
    },
  };
}
