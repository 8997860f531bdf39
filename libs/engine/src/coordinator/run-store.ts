import { ChildRunRepository, RunStoreRepository, SignalRepository, type Transaction } from '@weft/persistence';
import { badCharacter, MAX_NAME_CHARS, WeftError, type BufferedSignal, type ChildRun, type JsonValue, type RunStatus, type Store } from '../index.js';
import { versionToRun } from './versions.js';

/**
 * The machine's Store over the event's transaction: outputs of the requested nodes in one
 * query; the oldest unconsumed signal by name. A signal handed out once in this event is not
 * handed out again (its ConsumeSignal is only written after the machine returns).
 */
export class RunStore implements Store {
  private readonly handedOut: string[] = [];
  private readonly reads: RunStoreRepository;
  private readonly children: ChildRunRepository;
  private readonly signals: SignalRepository;

  constructor(
    private readonly m: Transaction,
    private readonly tenantId: string,
    private readonly runId: string,
    /** The run at the top of this run's tree (the run itself when it has no parent). */
    private readonly rootId: string,
  ) {
    this.reads = new RunStoreRepository(m);
    this.children = new ChildRunRepository(m);
    this.signals = new SignalRepository(m);
  }

  async outputs(nodeIds: string[]): Promise<Map<string, JsonValue>> {
    return (await this.reads.outputs(this.tenantId, this.runId, nodeIds)) as Map<string, JsonValue>;
  }

  async iterationOutputs(nodeId: string, maxChars: number): Promise<JsonValue[] | { tooLarge: number }> {
    // Measured in the database first: 10,000 iterations of 1 MiB must not be read to be refused.
    const total = await this.reads.iterationOutputChars(this.tenantId, this.runId, nodeId);
    if (total > maxChars) return { tooLarge: total };
    return (await this.reads.iterationOutputs(this.tenantId, this.runId, nodeId)) as JsonValue[];
  }

  async taskInput(taskId: string): Promise<JsonValue | undefined> {
    return (await this.reads.taskInput(this.tenantId, this.runId, taskId)) as JsonValue | undefined;
  }

  async childRun(taskId: string, attempt: number): Promise<ChildRun | undefined> {
    const row = await this.children.latest(this.tenantId, this.runId, taskId, attempt);
    if (!row) return undefined;
    const child: ChildRun = {
      id: row.id,
      status: row.status as RunStatus,
      output: row.output,
      error: row.error,
      started: row.eventSeq > 0,
      workflowId: row.workflowId,
      version: row.version,
      input: row.input,
      config: row.config,
    };
    if (row.failedNode !== null) child.failedTask = { nodeId: row.failedNode, error: row.failedError };
    return child;
  }

  async treeRuns(): Promise<number> {
    return this.children.treeSize(this.tenantId, this.rootId);
  }

  async startableVersion(workflowId: string, version?: number): Promise<{ version: number } | { error: string }> {
    if (workflowId.length > MAX_NAME_CHARS || badCharacter(workflowId)) return { error: `workflow ${JSON.stringify(workflowId.slice(0, 80))} not found` };
    try {
      return { version: (await versionToRun(this.m, this.tenantId, workflowId, version)).version };
    } catch (err) {
      if (err instanceof WeftError && err.code !== 'TRANSIENT') return { error: err.message };
      throw err;
    }
  }

  async pendingSignal(name: string): Promise<BufferedSignal | undefined> {
    const row = await this.signals.oldestPending(this.tenantId, this.runId, name, this.handedOut);
    if (!row) return undefined;
    this.handedOut.push(row.id);
    return { id: row.id, payload: row.payload };
  }
}
