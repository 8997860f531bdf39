import { describe, expect, it } from '@jest/globals';
import { RunEventFieldsResolver, RunsResolver, TaskFieldsResolver } from './runs.resolver.js';
import { TaskAttemptsResolver } from './task-attempts.resolver.js';

/** Where @nestjs/graphql keeps a resolver method's parameter decorators (@Parent, @Context, @Args…). */
const PARAM_ARGS_METADATA = '__routeArguments__';

/**
 * A field resolver without parameter decorators is called by @nestjs/graphql as it is (no
 * parameter extraction, no promise per call); one with any is wrapped on every call. A watched
 * run resolves these for each of its tasks on every update.
 */
describe('the field resolvers of runs, tasks and history events', () => {
  const plain: [string, object, string[]][] = [
    ['Run', RunsResolver, ['input', 'config', 'output', 'error', 'children', 'waitReason', 'waitDetail', 'mermaid', 'graph']],
    ['Task', TaskFieldsResolver, ['input', 'output', 'error', 'waitReason', 'waitDetail']],
    ['RunEvent', RunEventFieldsResolver, ['payload', 'actions', 'error']],
    ['Task', TaskAttemptsResolver, ['attempts']],
  ];

  it.each(plain)('%s: those without arguments take no parameter decorators', (_type, resolver, fields) => {
    const decorated = fields.filter((f) => Object.keys(Reflect.getMetadata(PARAM_ARGS_METADATA, resolver, f) ?? {}).length > 0);
    expect(decorated).toEqual([]);
  });
});
