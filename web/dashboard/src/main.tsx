/**
 * The dashboard's entry (issue #16): takes the tokens the login page handed over, or sends the
 * visitor to sign in; then starts the live event log and renders the app.
 */
import { render } from 'preact';
import { App } from './app.tsx';
import { DashboardContext } from './app-context.ts';
import { EventLog } from './event-log.ts';
import { createSession, goToLogin, takeHandedTokens } from './session.ts';
import './styles.css';

const session = createSession();
takeHandedTokens(session.store);
if (!session.store.get()) {
  goToLogin();
} else {
  const events = new EventLog(session.client);
  void events.start();
  const root = document.getElementById('app')!;
  root.textContent = ''; // the "Loading…" placeholder
  render(
    <DashboardContext.Provider value={{ client: session.client, session, events }}>
      <App />
    </DashboardContext.Provider>,
    root,
  );
}
