import { Link, useSearchParams } from 'react-router';
import { useSession } from '../session/session.js';
import { StartRunForm } from './start-run/StartRunForm.js';
import './admin.css';
import './workflows/forms.css';

/**
 * `/runs/start?workflowId=…&version=…`: starts a run (operator and admin keys). A viewer key is
 * told it may not, rather than shown a form the API would refuse.
 */
export function StartRunPage() {
  const [search] = useSearchParams();
  const { caller, can } = useSession();
  const workflowId = search.get('workflowId') ?? '';
  const version = search.get('version') ?? '';
  return (
    <section aria-labelledby="start-title">
      <p className="crumbs">
        <Link to="/runs">Runs</Link> /{' '}
        {workflowId && (
          <>
            <Link to={`/workflows/${encodeURIComponent(workflowId)}`}>{workflowId}</Link> /
          </>
        )}
      </p>
      <h1 id="start-title">Start a run</h1>
      {can.operate ? (
        <StartRunForm key={workflowId} workflowId={workflowId} version={/^[1-9]\d*$/.test(version) ? version : ''} />
      ) : (
        <p className="notice" role="note">
          Starting runs needs an operator or admin key; this key (<strong>{caller.keyName}</strong>) is a {caller.role} key. Sign in with another key to start a
          run.
        </p>
      )}
    </section>
  );
}
