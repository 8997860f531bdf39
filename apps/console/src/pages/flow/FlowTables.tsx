import { Link } from 'react-router';
import { TimeCell } from '../runs/RunsTable.js';
import type { ConcurrencyKeyRow, RateLimitRow } from './operations.js';

/** The tenant's concurrency groups: scope, workflow, key, limit, active and queued runs. */
export function ConcurrencyKeysTable(props: { keys: ConcurrencyKeyRow[] }) {
  if (!props.keys.length)
    return (
      <p className="muted">
        No concurrency keys: no run of a workflow with <code>concurrency</code> has started.
      </p>
    );
  return (
    <div className="table-wrap">
      <table className="numbers" data-testid="concurrency-keys">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Scope</th>
            <th scope="col">Workflow</th>
            <th scope="col" className="num">
              Limit
            </th>
            <th scope="col" className="num">
              Active
            </th>
            <th scope="col" className="num">
              Queued
            </th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((k) => (
            <tr key={`${k.scope}:${k.workflowId ?? ''}:${k.key}`} data-key={k.key}>
              <th scope="row" className="mono row-head">
                {k.key === '' ? '""' : k.key}
              </th>
              <td>{k.scope}</td>
              <td>
                {k.workflowId ? (
                  <Link className="mono" to={`/workflows/${encodeURIComponent(k.workflowId)}`}>
                    {k.workflowId}
                  </Link>
                ) : (
                  <span className="muted">every workflow</span>
                )}
              </td>
              <td className="num">{k.limit}</td>
              <td className="num">{k.active >= k.limit ? <span className="warn-text">{k.active}: full</span> : k.active}</td>
              <td className="num">{k.queued}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The tenant's rate keys: limit per window, starts in the window, held attempts and the next start. */
export function RateLimitsTable(props: { limits: RateLimitRow[] }) {
  if (!props.limits.length)
    return (
      <p className="muted">
        No rate limits: no node with <code>rate_limit</code> started an attempt in the last day.
      </p>
    );
  return (
    <div className="table-wrap">
      <table className="numbers" data-testid="rate-limits">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col" className="num">
              Limit
            </th>
            <th scope="col" className="num">
              Window
            </th>
            <th scope="col" className="num">
              Started in window
            </th>
            <th scope="col" className="num">
              Held
            </th>
            <th scope="col">Next start</th>
          </tr>
        </thead>
        <tbody>
          {props.limits.map((r) => (
            <tr key={r.key} data-key={r.key}>
              <th scope="row" className="mono row-head">
                {r.key}
              </th>
              <td className="num">{r.limit ?? <span className="muted">—</span>}</td>
              <td className="num">{r.perSeconds === null ? <span className="muted">—</span> : `${r.perSeconds} s`}</td>
              <td className="num">{r.startedInWindow}</td>
              <td className="num">{r.held}</td>
              <td className="nowrap">
                <TimeCell at={r.nextStartAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
