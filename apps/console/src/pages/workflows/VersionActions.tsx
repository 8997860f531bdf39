import { useState } from 'react';
import { useMutation, type CombinedError } from 'urql';
import { ErrorText } from '../../components/ErrorText.js';
import { DEPRECATE_VERSION, SET_DEFAULT_VERSION, type VersionSummary, type WorkflowSummary } from './operations.js';

type Outcome = { ok: string } | { error: CombinedError } | null;

/**
 * An admin's actions on one version: "Set as default" (pin it; "Pin as default" on the default
 * that follows latest, none on the pinned default), "Follow latest" (unpin, while pinned),
 * "Deprecate" or "Restore". A refused action shows the API's words.
 */
export function VersionActions(props: { workflow: WorkflowSummary; version: VersionSummary }) {
  const { workflow, version } = props;
  const [setDefault, runSetDefault] = useMutation(SET_DEFAULT_VERSION);
  const [deprecate, runDeprecate] = useMutation(DEPRECATE_VERSION);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const busy = setDefault.fetching || deprecate.fetching;
  const v = version.version;

  const act = async (run: () => Promise<{ error?: CombinedError }>, ok: string) => {
    setOutcome(null);
    const result = await run();
    setOutcome(result.error ? { error: result.error } : { ok });
  };

  return (
    <div className="actions">
      <div className="toolbar" role="group" aria-label={`Actions on version ${v}`}>
        {workflow.pinnedVersion !== v && (
          <button
            type="button"
            disabled={busy}
            onClick={() => act(() => runSetDefault({ workflowId: workflow.id, version: v }), `Version ${v} is now the default (pinned).`)}
          >
            {workflow.pinnedVersion === null && workflow.defaultVersion === v ? 'Pin as default' : 'Set as default'}
          </button>
        )}
        {workflow.pinnedVersion !== null && (
          <button
            type="button"
            className="quiet"
            disabled={busy}
            onClick={() => act(() => runSetDefault({ workflowId: workflow.id, version: null }), 'The default now follows the latest version.')}
          >
            Follow latest
          </button>
        )}
        {version.deprecated ? (
          <button
            type="button"
            className="quiet"
            disabled={busy}
            onClick={() => act(() => runDeprecate({ workflowId: workflow.id, version: v, deprecated: false }), `Version ${v} is restored.`)}
          >
            Restore
          </button>
        ) : (
          <button
            type="button"
            className="danger"
            disabled={busy}
            onClick={() =>
              act(() => runDeprecate({ workflowId: workflow.id, version: v, deprecated: true }), `Version ${v} is deprecated: new runs on it are refused.`)
            }
          >
            Deprecate
          </button>
        )}
      </div>
      {outcome && 'ok' in outcome && (
        <p className="done" role="status">
          {outcome.ok}
        </p>
      )}
      {outcome && 'error' in outcome && <ErrorText error={outcome.error} />}
    </div>
  );
}
