import { describe, expect, it } from '@jest/globals';
import { CelTemplateResolver } from './resolver.js';
import { TaskStatus } from '../model/workflow-types.js';

/**
 * TemplateError promises its message "never contains the run's input, config or outputs"; a
 * DO_WHILE condition over a sensitive body node's output puts that message in the loop's error and
 * the run's. Some CEL errors echo the value they failed on.
 */
describe('a template error over an output', () => {
  const resolver = new CelTemplateResolver();
  const ctx = { input: {}, config: {}, tasks: new Map([['s', { status: TaskStatus.Completed, output: { x: 'SECRET-TOKEN-123', p: '[SECRET' } }]]) };
  const message = (t: string): string => {
    try {
      resolver.resolve(t, ctx as never, new Date());
    } catch (err) {
      return String((err as Error).message);
    }
    return 'resolved';
  };

  it('keeps the value out of a failed conversion or regex', () => {
    expect(message('{{ "a".matches(tasks.s.output.p) }}')).not.toContain('SECRET');
    expect(message('{{ int(tasks.s.output.x) > 1 }}')).not.toContain('SECRET');
  });
  it('keeps the value out of a failed duration(), and says what failed', () => {
    const m = message('{{ duration(tasks.s.output.x) > duration("1s") }}');
    expect(m).not.toContain('SECRET');
    expect(m).toContain('Invalid duration string (the value is not shown)');
  });
});
