import type { WorkflowSummary } from './operations.js';

/** "v3 pinned" or "v5 following latest". */
export function DefaultVersion(props: { workflow: Pick<WorkflowSummary, 'defaultVersion' | 'pinnedVersion'> }) {
  const { defaultVersion, pinnedVersion } = props.workflow;
  return (
    <span className="nowrap">
      v{defaultVersion} <span className="muted">{pinnedVersion === null ? 'following latest' : 'pinned'}</span>
    </span>
  );
}
