import { useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { DefaultVersion } from './workflows/DefaultVersion.js';
import { TimeCell } from './runs/RunsTable.js';
import { NewWorkflow } from './workflows/NewWorkflow.js';
import { WORKFLOWS, type WorkflowSummary } from './workflows/operations.js';
import { useCan } from '../session/session.js';
import './admin.css';
import './workflows/forms.css';

/**
 * `/workflows`: the tenant's workflows, each linking to its versions; for an admin key, the form
 * that publishes a new workflow (open at once while there is none).
 */
export function WorkflowsPage() {
  const can = useCan();
  const [creating, setCreating] = useState(false);
  const [{ data, error, fetching }] = useQuery<{ workflows: WorkflowSummary[] }>({ query: WORKFLOWS });
  const workflows = data?.workflows;
  const empty = workflows?.length === 0;
  return (
    <section>
      <h1>Workflows</h1>
      {fetching && !data && (
        <p className="loading" role="status">
          Loading workflows…
        </p>
      )}
      <ErrorText error={error} />
      {empty && (
        <p>
          This tenant has no workflows yet. {can.administer ? 'Publish one below, or' : 'An admin key publishes one in this console or'} with{' '}
          <code>weft apply -f &lt;file&gt;</code> (the file's name is the workflow id, or give <code>--id</code>).
        </p>
      )}
      {can.administer && !empty && workflows && (
        <div className="page-actions">
          <button type="button" className="quiet" aria-expanded={creating} onClick={() => setCreating((c) => !c)}>
            {creating ? 'Close the new workflow' : 'New workflow'}
          </button>
        </div>
      )}
      {can.administer && workflows && (empty || creating) && <NewWorkflow />}
      {workflows && workflows.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Workflow</th>
                <th scope="col">Name</th>
                <th scope="col">Latest</th>
                <th scope="col">Default</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {workflows.map((w) => (
                <tr key={w.id}>
                  <td>
                    <Link className="mono" to={`/workflows/${encodeURIComponent(w.id)}`}>
                      {w.id}
                    </Link>
                  </td>
                  <td>{w.name ?? <span className="muted">—</span>}</td>
                  <td>v{w.latestVersion}</td>
                  <td>
                    <DefaultVersion workflow={w} />
                  </td>
                  <td>
                    <TimeCell at={w.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
