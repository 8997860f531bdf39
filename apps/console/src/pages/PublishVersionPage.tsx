import { Link, useNavigate, useParams } from 'react-router';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { useSession } from '../session/session.js';
import { PublishForm } from './workflows/PublishForm.js';
import { publishedState } from './workflows/PublishedNotice.js';
import { VERSION_TEXT, type VersionText } from './workflows/operations.js';
import './admin.css';
import './workflows/forms.css';

/**
 * `/workflows/:workflowId/publish`: a new version of the workflow from YAML, the editor filled
 * with the latest version's source (admin keys). Once published, the workflow's page shows the
 * new version.
 */
export function PublishVersionPage() {
  const workflowId = useParams().workflowId ?? '';
  const navigate = useNavigate();
  const { caller, can } = useSession();
  const [{ data, error, fetching }] = useQuery<{ workflowVersion: VersionText | null }>({
    query: VERSION_TEXT,
    variables: { workflowId, version: null },
    pause: !can.administer,
    requestPolicy: 'network-only',
  });
  const latest = data?.workflowVersion;
  const href = `/workflows/${encodeURIComponent(workflowId)}`;

  return (
    <section aria-labelledby="publish-title">
      <p className="crumbs">
        <Link to="/workflows">Workflows</Link> / <Link to={href}>{workflowId}</Link> /
      </p>
      <h1 id="publish-title">
        Publish a new version of <span className="mono">{workflowId}</span>
      </h1>
      {!can.administer ? (
        <p className="notice" role="note">
          Publishing needs an admin key; this key (<strong>{caller.keyName}</strong>) is an {caller.role === 'operator' ? 'operator' : 'viewer'} key. Sign in
          with an admin key, or ask an admin to run <code>weft apply -f FILE --id {workflowId}</code>.
        </p>
      ) : (
        <>
          {fetching && !data && (
            <p className="loading" role="status">
              Loading the latest version…
            </p>
          )}
          <ErrorText error={error} />
          {latest && (
            <>
              <p className="hint publish-hint">
                The editor starts from version {latest.version}, the latest. Publishing the same definition again creates no version.
              </p>
              <PublishForm
                key={latest.version}
                workflowId={workflowId}
                latestVersion={latest.version}
                initialDefinition={latest.source}
                onPublished={(published) => navigate(`${href}?version=${published.version}`, { state: publishedState(published) })}
              />
            </>
          )}
        </>
      )}
    </section>
  );
}
