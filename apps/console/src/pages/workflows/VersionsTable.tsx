import { Link } from 'react-router';
import { TimeCell } from '../runs/RunsTable.js';
import { VersionMarks } from './VersionMarks.js';
import type { WorkflowWithVersions } from './operations.js';

/** Every version, newest first; each links to `?version=N`, the selected one is marked current. */
export function VersionsTable(props: { workflow: WorkflowWithVersions; selected: number | null }) {
  const { workflow, selected } = props;
  const versions = [...workflow.versions].sort((a, b) => b.version - a.version);
  return (
    <div className="table-wrap versions">
      <table>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Marks</th>
            <th scope="col">Created</th>
            <th scope="col">By</th>
            <th scope="col">Checksum</th>
          </tr>
        </thead>
        <tbody>
          {versions.map((v) => {
            const current = v.version === selected;
            return (
              <tr key={v.version} className={current ? 'selected-row' : undefined}>
                <td>
                  <Link to={`?version=${v.version}`} aria-current={current ? 'page' : undefined}>
                    v{v.version}
                  </Link>
                </td>
                <td>
                  <VersionMarks workflow={workflow} version={v} />
                </td>
                <td>
                  <TimeCell at={v.createdAt} />
                </td>
                <td>{v.createdBy ?? <span className="muted">unknown</span>}</td>
                <td>
                  <code title={v.checksum}>{v.checksum.slice(0, 12)}</code>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
