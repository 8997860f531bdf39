import { registerEnumType } from '@nestjs/graphql';
import { RunStatus, TaskStatus } from '@weft/engine';

/** GraphQL enums named by their values (`RUNNING`), built from the engine's status sets. */
function byValue<V extends string>(values: Record<string, V>): { [K in V]: K } {
  return Object.fromEntries(Object.values(values).map((v) => [v, v])) as { [K in V]: K };
}

export const RunStatusEnum = byValue(RunStatus);
export const TaskStatusEnum = byValue(TaskStatus);

registerEnumType(RunStatusEnum, { name: 'RunStatus', description: 'Status of a run.' });
registerEnumType(TaskStatusEnum, { name: 'TaskStatus', description: 'Status of a task (one per reached node).' });
