import { Link } from 'react-router';
import type { WorkflowWithVersions } from './operations.js';

/**
 * The workflow page's links: start a run of the selected version (operator, admin), publish a
 * new version (admin), compare the selected version with the one before it (two versions or more).
 */
export function WorkflowActions(props: { workflow: WorkflowWithVersions; selected: number | null; canOperate: boolean; canAdminister: boolean }) {
  const { workflow, selected } = props;
  const id = encodeURIComponent(workflow.id);
  // The selected version against the one before it; version 1 against version 2.
  const shown = selected ?? workflow.latestVersion;
  const [from, to] = shown > 1 ? [shown - 1, shown] : [1, 2];
  const startHref = `/runs/start?workflowId=${id}${selected !== null && selected !== workflow.defaultVersion ? `&version=${selected}` : ''}`;
  return (
    <div className="page-actions">
      {props.canOperate && (
        <Link className="button" to={startHref}>
          Start a run
        </Link>
      )}
      {props.canAdminister && (
        <Link className="button quiet" to={`/workflows/${id}/publish`}>
          Publish a new version
        </Link>
      )}
      {workflow.versions.length > 1 && (
        <Link className="button quiet" to={`/workflows/${id}/diff?from=${from}&to=${to}`}>
          Compare versions
        </Link>
      )}
    </div>
  );
}
