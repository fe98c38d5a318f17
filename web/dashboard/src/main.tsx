/**
 * The dashboard's entry (issue #16): takes the tokens the login page handed over, or sends the
 * visitor to sign in; then starts the live event log and renders the app.
 */
import { render } from 'preact';
import { App } from './app.tsx';
import { DashboardContext } from './app-context.ts';
import { EventLog } from './event-log.ts';
import { isUnreachable, ReachabilityMonitor } from './reachability.ts';
import { createSession, goToLogin, takeHandedTokens } from './session.ts';
import './styles.css';

const session = createSession();
takeHandedTokens(session.store);
if (!session.store.get()) {
  goToLogin();
} else {
  // any HTTP answer to the health probe (even 503 "not ready") means the node is there
  const reach = new ReachabilityMonitor(() => session.client.admin.health().catch((err: unknown) => {
    if (isUnreachable(err)) throw err;
  }));
  const events = new EventLog(session.client);
  void events.start();
  const root = document.getElementById('app')!;
  root.textContent = ''; // the "Loading…" placeholder
  render(
    <DashboardContext.Provider value={{ client: session.client, session, events, reach }}>
      <App />
    </DashboardContext.Provider>,
    root,
  );
}
