import { NavLink, Outlet, useLocation } from 'react-router';
import { ErrorBoundary } from '../components/ErrorBoundary.js';
import { useSession } from '../session/session.js';

/**
 * The frame of every signed-in page: the navigation, who is signed in, and the page. A page that
 * throws is caught by an error boundary that the location resets, so navigating away clears it.
 */
export function Shell() {
  const { caller, can, signOut } = useSession();
  const location = useLocation();
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Weft</span>
        <nav aria-label="Main">
          <NavLink to="/runs">Runs</NavLink>
          <NavLink to="/workflows">Workflows</NavLink>
          <NavLink to="/schedules">Schedules</NavLink>
          <NavLink to="/queues">Queues</NavLink>
          <NavLink to="/flow">Flow</NavLink>
          {can.administer && <NavLink to="/keys">Keys</NavLink>}
          {can.administer && <NavLink to="/webhooks">Webhooks</NavLink>}
          {can.administer && <NavLink to="/settings">Settings</NavLink>}
          <a href="/graphql">GraphQL IDE</a>
        </nav>
        <span className="caller" title={`tenant ${caller.tenantId}`}>
          <span className="key-name" title="API key">
            {caller.keyName}
          </span>{' '}
          <span className={`role role-${caller.role}`} title="Role of this key">
            <span className="role-word">role</span> {caller.role}
          </span>
        </span>
        <button type="button" className="quiet" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <ErrorBoundary resetKey={location.key}>
          <Outlet />
        </ErrorBoundary>
      </main>
    </div>
  );
}
