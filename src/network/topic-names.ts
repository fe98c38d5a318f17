/**
 * The names of the gossip topics (domain.md §1.3): a namespace's governance and a context's state.
 * Read by the domains that publish on them and by the payload counters (payload.ts), which tell a
 * governance topic from a context's by its name.
 */

/** Gossip topic of a namespace's governance (domain.md §1.3). */
export const namespaceTopic = (namespaceId: string): string => `ns/${namespaceId}`;

/** Gossip topic of a context's state (domain.md §1.3: the bare context id, hex on hearth). */
export const contextTopic = (contextId: string): string => contextId;
