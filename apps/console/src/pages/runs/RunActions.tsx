import { useSession } from '../../session/session.js';
import { CancelRunForm } from './CancelRunForm.js';
import { awaitedSignal, isActive, isCancellable, isFinished } from './model.js';
import { PauseRunForm } from './PauseRunForm.js';
import { RetryRunForm } from './RetryRunForm.js';
import { SendSignalForm } from './SendSignalForm.js';
import type { RunDetail } from './types.js';

/**
 * What an operator can do to the run: pause it while it is pending or running and resume it while
 * it is paused, cancel it while it is active (paused included), signal it until it finishes, retry
 * it from a node once it has. Nothing for a viewer key (the API refuses them anyway).
 */
export function RunActions(props: {
  run: RunDetail;
  nodeIds: readonly string[];
  /** Body node id → its DO_WHILE node's id (see runLoops). */
  loopOf?: ReadonlyMap<string, string>;
  selectedNodeId: string | null;
  onSelectNode: (nodeId: string | null) => void;
}) {
  const { can } = useSession();
  if (!can.operate) return null;
  const { run } = props;
  return (
    <section className="panel run-actions" aria-labelledby="run-actions-title">
      <h2 id="run-actions-title">Actions</h2>
      {isActive(run.status) && <PauseRunForm runId={run.id} status={run.status} />}
      {isCancellable(run.status) && <CancelRunForm runId={run.id} />}
      {!isFinished(run.status) && <SendSignalForm runId={run.id} suggested={awaitedSignal(run.tasks)} />}
      <RetryRunForm run={run} nodeIds={props.nodeIds} loopOf={props.loopOf} selectedNodeId={props.selectedNodeId} onSelectNode={props.onSelectNode} />
    </section>
  );
}
