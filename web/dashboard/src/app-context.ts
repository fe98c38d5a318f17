/** What every page reaches: the SDK client of the session, the session itself, the event log and whether the node answers. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Client } from '../../../src/client/index.ts';
import type { EventLog } from './event-log.ts';
import type { ReachabilityMonitor } from './reachability.ts';
import type { Session } from './session.ts';

export interface Dashboard {
  client: Client;
  session: Session;
  events: EventLog;
  /** whether the node answers (the banner, and loads that run again when it is back) */
  reach: ReachabilityMonitor;
}

export const DashboardContext = createContext<Dashboard | null>(null);

export function useDashboard(): Dashboard {
  const value = useContext(DashboardContext);
  if (!value) throw new Error('the dashboard context is missing');
  return value;
}
