import { Link } from 'react-router';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { DefaultVersion } from './workflows/DefaultVersion.js';
import { Time } from '../components/Time.js';
import { WORKFLOWS, type WorkflowSummary } from './workflows/operations.js';
import './admin.css';

/** `/workflows`: the tenant's workflows, each linking to its versions. */
export function WorkflowsPage() {
  const [{ data, error, fetching }] = useQuery<{ workflows: WorkflowSummary[] }>({ query: WORKFLOWS });
  const workflows = data?.workflows;
  return (
    <section>
      <h1>Workflows</h1>
      {fetching && !data && <p className="loading" role="status">Loading workflows…</p>}
      <ErrorText error={error} />
      {workflows && workflows.length === 0 && (
        <p>
          This tenant has no workflows yet. An admin key publishes one with <code>weft publish</code> or the <code>publishWorkflow</code> mutation.
        </p>
      )}
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
                    <Link className="mono" to={`/workflows/${encodeURIComponent(w.id)}`}>{w.id}</Link>
                  </td>
                  <td>{w.name ?? <span className="muted">—</span>}</td>
                  <td>v{w.latestVersion}</td>
                  <td>
                    <DefaultVersion workflow={w} />
                  </td>
                  <td>
                    <Time value={w.updatedAt} />
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
