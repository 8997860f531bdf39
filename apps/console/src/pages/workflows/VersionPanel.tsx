import { Link } from 'react-router';
import { useQuery } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { DagView } from '../../components/dag/DagView.js';
import { useCan } from '../../session/session.js';
import { TimeCell } from '../runs/RunsTable.js';
import { VersionActions } from './VersionActions.js';
import { VersionMarks } from './VersionMarks.js';
import { WORKFLOW_VERSION, type VersionDetail, type WorkflowWithVersions } from './operations.js';

/** One version in full: marks, admin actions, warnings, the diagram and the source as published. */
export function VersionPanel(props: { workflow: WorkflowWithVersions; version: number }) {
  const { workflow, version } = props;
  const can = useCan();
  const [{ data, error, fetching }] = useQuery<{ workflowVersion: VersionDetail | null }>({
    query: WORKFLOW_VERSION,
    variables: { workflowId: workflow.id, version },
  });
  const detail = data?.workflowVersion;
  const summary = workflow.versions.find((v) => v.version === version);
  const runsHref = `/runs?workflowId=${encodeURIComponent(workflow.id)}&version=${version}`;

  return (
    <section className="version-panel" aria-labelledby="version-title">
      <div className="version-head">
        <h2 id="version-title">Version {version}</h2>
        {summary && <VersionMarks workflow={workflow} version={summary} />}
        <Link to={runsHref}>Runs of this version</Link>
      </div>
      {summary?.deprecated && (
        <p className="muted">
          Deprecated <TimeCell at={summary.deprecatedAt} />: new runs on it are refused, running ones continue.
        </p>
      )}
      {can.administer && summary && <VersionActions workflow={workflow} version={summary} />}
      {fetching && !data && (
        <p className="loading" role="status">
          Loading version {version}…
        </p>
      )}
      <ErrorText error={error} />
      {detail && (
        <>
          {detail.warnings.length > 0 && (
            <div className="warnings" role="note" aria-labelledby="warnings-title">
              <h3 id="warnings-title">Warnings</h3>
              <ul>
                {detail.warnings.map((w, i) => (
                  <li key={i}>
                    {(w.nodeId || w.path) && <code>{[w.nodeId && `node ${w.nodeId}`, w.path].filter(Boolean).join(', ')}</code>} {w.message}
                  </li>
                ))}
              </ul>
            </div>
          )}
          <div className="version-body">
            <div>
              <h3>Diagram</h3>
              <DagView graph={detail.graph} label={`DAG of ${workflow.id} version ${version}`} />
            </div>
            <div>
              <h3>Source</h3>
              <pre className="source" tabIndex={0} aria-label={`Source of ${workflow.id} version ${version}`}>
                {detail.source}
              </pre>
            </div>
          </div>
        </>
      )}
    </section>
  );
}
