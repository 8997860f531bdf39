import { Link, useParams, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { useCan } from '../session/session.js';
import { DefaultVersion } from './workflows/DefaultVersion.js';
import { PublishedNotice } from './workflows/PublishedNotice.js';
import { VersionPanel } from './workflows/VersionPanel.js';
import { VersionsTable } from './workflows/VersionsTable.js';
import { WorkflowActions } from './workflows/WorkflowActions.js';
import { WORKFLOW, type WorkflowWithVersions } from './workflows/operations.js';
import './admin.css';
import './workflows/forms.css';

/**
 * `/workflows/:workflowId`: the workflow's versions and one of them in full (`?version=N`,
 * else the default version): its diagram, source, warnings and, for an admin key, the actions
 * on it. Links to start a run (operator, admin), publish a new version (admin) and compare two
 * versions.
 */
export function WorkflowPage() {
  const workflowId = useParams().workflowId ?? '';
  const [search] = useSearchParams();
  const can = useCan();
  const [{ data, error, fetching }] = useQuery<{ workflow: WorkflowWithVersions | null }>({ query: WORKFLOW, variables: { workflowId } });
  const workflow = data?.workflow;
  const asked = Number.parseInt(search.get('version') ?? '', 10);
  const selected = Number.isInteger(asked) && asked > 0 ? asked : workflow?.defaultVersion;

  return (
    <section>
      <p className="crumbs">
        <Link to="/workflows">Workflows</Link> /
      </p>
      <h1 className="page-title">
        <span className="mono">{workflowId}</span>
        {workflow?.name && <span className="muted title-name"> {workflow.name}</span>}
      </h1>
      <PublishedNotice workflowId={workflowId} />
      {fetching && !data && (
        <p className="loading" role="status">
          Loading the workflow…
        </p>
      )}
      <ErrorText error={error} />
      {workflow && (
        <>
          <p className="facts">
            <span>
              Default: <DefaultVersion workflow={workflow} />
            </span>
            <span>Latest: v{workflow.latestVersion}</span>
            <span>
              {workflow.versions.length} version{workflow.versions.length === 1 ? '' : 's'}
            </span>
          </p>
          <WorkflowActions workflow={workflow} selected={selected ?? null} canOperate={can.operate} canAdminister={can.administer} />
          <h2>Versions</h2>
          <VersionsTable workflow={workflow} selected={selected ?? null} />
          {selected !== undefined && <VersionPanel workflow={workflow} version={selected} />}
        </>
      )}
    </section>
  );
}
