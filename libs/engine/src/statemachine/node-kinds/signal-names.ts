/**
 * Which signal names a run can take: the names its WAIT_FOR_EVENT nodes wait for now, and the
 * names those nodes could ever wait for (a literal `spec.event`, or any name that fits the literal
 * parts of a templated one, `approve-{{input.order_id}}` taking `approve-…`). A signal no node can
 * ever take would sit in the run's buffer for good; it is refused instead, with a message saying
 * what the run does wait for. Pure.
 */
import { suggestKey } from '../../model/validation/suggest.js';
import { findTemplates } from '../../model/template-syntax.js';
import { NodeType, TaskStatus } from '../../model/workflow-types.js';
import type { Step } from '../step.js';

/** Names (or node ids) listed in a refusal; the others are counted. */
const MAX_LISTED = 5;
/** Longest name repeated in a refusal, in UTF-16 code units (a name may have 1,024). */
const MAX_SHOWN_CHARS = 80;

/**
 * True when a WAIT_FOR_EVENT whose `spec.event` is `event` (as written, templates included)
 * could wait for `name`: `event` itself when it has no template, else any name made of its
 * literal parts in order with anything in place of each template (`approve-{{input.id}}` takes
 * `approve-7`, not `aprove-7`).
 */
export function eventCanBe(event: string, name: string): boolean {
  const templates = findTemplates(event);
  if (templates.length === 0) return event === name;
  const literals: string[] = [];
  let pos = 0;
  for (const t of templates) {
    literals.push(event.slice(pos, t.index));
    pos = t.index + t.text.length;
  }
  literals.push(event.slice(pos));
  const first = literals[0]!;
  const last = literals[literals.length - 1]!;
  if (!name.startsWith(first)) return false;
  let at = first.length;
  for (const middle of literals.slice(1, -1)) {
    const i = name.indexOf(middle, at);
    if (i < 0) return false;
    at = i + middle.length;
  }
  return name.length - last.length >= at && name.endsWith(last);
}

/** `name` as JSON, cut to {@link MAX_SHOWN_CHARS}. */
function shown(name: string): string {
  const s = JSON.stringify(name);
  return s.length <= MAX_SHOWN_CHARS ? s : `${s.slice(0, MAX_SHOWN_CHARS - 2)}…"`;
}

/** `"a" (node x), "b" (nodes y, z)`: each name with the nodes of it, the first {@link MAX_LISTED} names, then `and N more`. */
function listing(byName: ReadonlyMap<string, readonly string[]>): string {
  const parts = [...byName].slice(0, MAX_LISTED).map(([name, nodes]) => `${shown(name)} (node${nodes.length > 1 ? 's' : ''} ${nodes.join(', ')})`);
  const more = byName.size - parts.length;
  return more > 0 ? `${parts.join(', ')} and ${more} more` : parts.join(', ');
}

/** Adds `nodeId` under `name`, keeping first-seen order. */
function add(map: Map<string, string[]>, name: string, nodeId: string): void {
  const nodes = map.get(name);
  if (nodes) nodes.push(nodeId);
  else map.set(name, [nodeId]);
}

/**
 * Why run `s.run` cannot take a signal named `name`, or undefined when it can: some node waits for
 * that name now, or some WAIT_FOR_EVENT node of its definition could wait for it later (then the
 * signal is buffered). The reason, in the definition's node order:
 * - nodes are waiting: `run R is not waiting for signal "aproved"; it waits for "approved" (node
 *   approve) (did you mean "approved"?), and no WAIT_FOR_EVENT node of its workflow takes that
 *   name`;
 * - none is: `run R is not waiting for signal "x": it waits for no signal now, and no
 *   WAIT_FOR_EVENT node of its workflow takes that name (they take "approved" (node approve))`,
 *   or `… its workflow has no WAIT_FOR_EVENT node`.
 */
export function signalRefusal(s: Step, name: string): string | undefined {
  const waiting = new Map<string, string[]>();
  const declared = new Map<string, string[]>();
  for (const node of s.dag.allNodes) {
    if (node.type !== NodeType.WaitForEvent) continue;
    const state = s.run.nodes.get(node.node_id);
    if (state?.status === TaskStatus.Waiting && state.awaitedSignal !== undefined) {
      if (state.awaitedSignal === name) return undefined;
      add(waiting, state.awaitedSignal, node.node_id);
    }
    const event = (node.spec as { event?: unknown } | undefined)?.event;
    if (typeof event !== 'string') continue;
    if (eventCanBe(event, name)) return undefined;
    add(declared, event, node.node_id);
  }
  const run = `run ${s.run.id} is not waiting for signal ${shown(name)}`;
  const never = 'no WAIT_FOR_EVENT node of its workflow takes that name';
  if (waiting.size > 0) {
    const near = suggestKey(name, [...waiting.keys()]);
    return `${run}; it waits for ${listing(waiting)}${near !== undefined ? ` (did you mean ${shown(near)}?)` : ''}, and ${never}`;
  }
  if (declared.size === 0) return `${run}: its workflow has no WAIT_FOR_EVENT node`;
  return `${run}: it waits for no signal now, and ${never} (they take ${listing(declared)})`;
}
