import { Link } from 'react-router';
import { StatusBadge } from '../../components/StatusBadge.js';
import type { RunBatchWithItems } from './operations.js';

/**
 * One page of a batch's runs in the batch's order: each run's id (a link to its page), what came
 * of it and why when it was skipped or failed. Rows are `<tr data-batch-run-id data-outcome>`.
 */
export function BatchItems(props: { items: RunBatchWithItems['items']; caption: string }) {
  const rows = props.items.edges.map((e) => e.node);
  if (!rows.length) return <p className="empty-state">No runs on this page.</p>;
  return (
    <div className="table-wrap">
      <table className="batch-items">
        <caption className="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Outcome</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((item) => (
            <tr key={item.runId} data-batch-run-id={item.runId} data-outcome={item.outcome}>
              <td>
                <Link className="mono run-id" to={`/runs/${item.runId}`}>
                  {item.runId}
                </Link>
              </td>
              <td>
                <StatusBadge status={item.outcome} />
              </td>
              <td className="pre-wrap">{item.error ?? <span className="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
