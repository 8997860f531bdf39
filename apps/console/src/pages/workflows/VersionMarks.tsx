import type { VersionSummary, WorkflowSummary } from './operations.js';

/** The marks of a version: "default", "latest", "deprecated" (words, not only colours). */
export function VersionMarks(props: { workflow: WorkflowSummary; version: Pick<VersionSummary, 'version' | 'deprecated'> }) {
  const { workflow, version } = props;
  const marks: [string, string][] = [];
  if (version.version === workflow.defaultVersion) marks.push(['default', workflow.pinnedVersion === null ? 'default (follows latest)' : 'default (pinned)']);
  if (version.version === workflow.latestVersion) marks.push(['latest', 'latest']);
  if (version.deprecated) marks.push(['deprecated', 'deprecated']);
  if (!marks.length) return null;
  return (
    <span className="marks">
      {marks.map(([kind, word]) => (
        <span key={kind} className={`mark mark-${kind}`}>
          {word}
        </span>
      ))}
    </span>
  );
}
