import { describe, expect, it } from '@jest/globals';
import { TaskStatus } from '../../model/workflow-types.js';
import { MachineError } from '../errors.js';
import { edge, fork, Harness, task, waitFor } from '../testing/harness.js';
import { eventCanBe } from './signal-names.js';

/** The MachineError a signal is refused with. */
async function refusal(h: Harness, name: string): Promise<MachineError> {
  const err = await h.signal(name).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(MachineError);
  return err as MachineError;
}

describe('which names a WAIT_FOR_EVENT could wait for', () => {
  it('a literal event its name only; a templated one any name made of its literal parts in order', () => {
    expect(eventCanBe('approved', 'approved')).toBe(true);
    expect(eventCanBe('approved', 'aproved')).toBe(false);
    expect(eventCanBe('approve-{{input.order_id}}', 'approve-2001')).toBe(true);
    expect(eventCanBe('approve-{{input.order_id}}', 'aprove-2001')).toBe(false);
    expect(eventCanBe('{{input.kind}}-ok-{{input.id}}.done', 'pay-ok-7.done')).toBe(true);
    expect(eventCanBe('{{input.kind}}-ok-{{input.id}}.done', 'pay-ko-7.done')).toBe(false);
    expect(eventCanBe('a{{x}}a', 'a')).toBe(false); // both literal parts must fit, apart
    expect(eventCanBe('{{input.event}}', 'anything')).toBe(true);
  });
});

describe('a signal no node of the run can take is refused, saying what the run waits for', () => {
  it('names the waiting nodes and their names, with the close one, and changes nothing', async () => {
    const h = new Harness([waitFor('approve', { event: 'approved' }), task('ship')], [edge('approve', 'ship')]);
    await h.start();
    const err = await refusal(h, 'aproved');
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.message).toBe(
      'run run-1 is not waiting for signal "aproved"; it waits for "approved" (node approve) (did you mean "approved"?), ' +
        'and no WAIT_FOR_EVENT node of its workflow takes that name',
    );
    expect(h.signals).toEqual([]);
    expect(h.node('approve').status).toBe(TaskStatus.Waiting);
    expect((await h.signal('approved')).signalDelivered).toBe(true);
  });

  it('groups the nodes waiting for one name, and names no suggestion when none is close', async () => {
    const h = new Harness(
      [fork('f'), waitFor('a', { event: 'go' }), waitFor('b', { event: 'go' }), waitFor('c', { event: 'stop-{{input.id}}' })],
      [edge('f', 'a'), edge('f', 'b'), edge('f', 'c')],
      { input: { id: 7 } },
    );
    await h.start();
    expect((await refusal(h, 'launch')).message).toBe(
      'run run-1 is not waiting for signal "launch"; it waits for "go" (nodes a, b), "stop-7" (node c), and no WAIT_FOR_EVENT node of its workflow takes that name',
    );
    // A name the templated event could take later is buffered, as any early signal.
    expect((await h.signal('stop-8')).signalDelivered).toBe(false);
    expect(h.signals.map((x) => x.name)).toEqual(['stop-8']);
  });

  it('says the run waits for no signal now, and which names its nodes take, before any node waits', async () => {
    const h = new Harness([task('a'), waitFor('approve', { event: 'approve-{{input.order_id}}' })], [edge('a', 'approve')]);
    await h.start();
    expect((await refusal(h, 'approved-2001')).message).toBe(
      'run run-1 is not waiting for signal "approved-2001": it waits for no signal now, and no WAIT_FOR_EVENT node of its workflow takes that name ' +
        '(they take "approve-{{input.order_id}}" (node approve))',
    );
    expect((await h.signal('approve-2001')).signalDelivered).toBe(false); // early: buffered
  });

  it('says so when the workflow has no WAIT_FOR_EVENT node at all', async () => {
    const h = new Harness([task('a')], []);
    await h.start();
    expect((await refusal(h, 'go')).message).toBe('run run-1 is not waiting for signal "go": its workflow has no WAIT_FOR_EVENT node');
  });

  it('cuts a long name in the message', async () => {
    const h = new Harness([task('a')], []);
    await h.start();
    const message = (await refusal(h, 'x'.repeat(1000))).message;
    expect(message).toBe(`run run-1 is not waiting for signal "${'x'.repeat(77)}…": its workflow has no WAIT_FOR_EVENT node`);
  });
});
