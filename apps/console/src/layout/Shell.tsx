import { NavLink, Outlet } from 'react-router';
import { useSession } from '../session/session.js';

/** The frame of every signed-in page: the navigation, who is signed in, and the page. */
export function Shell() {
  const { caller, can, signOut } = useSession();
  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <span className="brand">Weft</span>
        <nav aria-label="Main">
          <NavLink to="/runs">Runs</NavLink>
          <NavLink to="/workflows">Workflows</NavLink>
          <NavLink to="/schedules">Schedules</NavLink>
          <NavLink to="/queues">Queues</NavLink>
          {can.administer && <NavLink to="/keys">Keys</NavLink>}
          <a href="/graphql">GraphQL IDE</a>
        </nav>
        <span className="caller" title={`tenant ${caller.tenantId}`}>
          {caller.keyName} <span className={`role role-${caller.role}`}>{caller.role}</span>
        </span>
        <button type="button" className="quiet" onClick={() => signOut()}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
