import type { EntityManager } from 'typeorm';
import { WriteInvariantError } from '../errors.js';
import { sql, sqlAtCommit } from '../sql.js';
import { assertTenant } from '../tenant-transaction.js';

/**
 * Throws {@link WriteInvariantError} naming run `runId` and `what` unless a write changed
 * exactly `expected` rows (it `matched`).
 */
export function expectRows(runId: string, expected: number, matched: number | undefined, what: string): void {
  if (matched !== expected) {
    throw new WriteInvariantError(`${expectation(runId, expected, what)}, matched ${matched}`);
  }
}

/**
 * One write of an event: a single INSERT, UPDATE or DELETE (no WITH, no RETURNING) with its own
 * parameters `$1…$n`. Parts that touch different rows are sent together by {@link runWrites},
 * in one statement and one round trip. With `expect`, the part must change exactly `rows` rows.
 */
export interface WritePart {
  text: string;
  params: unknown[];
  expect?: { rows: number; what: string };
  /**
   * The same write made conditional, for {@link fencedWrite}: `text` with the condition
   * {@link GATE} where it applies (a WHERE of an INSERT … SELECT, an AND of an UPDATE's WHERE).
   * Absent when the write has no such form: an event with it cannot take the fenced path.
   */
  gated?: string;
}

/** Where a {@link WritePart.gated} statement takes the fence's verdict. */
export const GATE = '/*gate*/';

/**
 * Where a {@link WritePart.gated} statement takes the verdict on the event's take (true when the
 * take was allowed, or there was none to ask for): a part written either way that differs by it.
 */
export const TOOK = '/*took*/';

/** What a fenced write checks before it writes anything (see {@link fencedWrite}). */
export interface WriteFence {
  /** The run's `event_seq` the decision was made on. */
  seq: number;
  /** The reported task and attempt, which must still be RUNNING under `leaseToken`. */
  taskId: string;
  attempt: number;
  leaseToken: string;
  /** A queue the event takes an attempt from (eager dispatch): `weft_may_take` must allow it. */
  takeFrom?: string;
}

/**
 * Runs `parts` in transaction `m`, which must be bound to `tenantId`, as one statement: each part becomes a data-modifying CTE (its
 * parameters renumbered after the previous parts'), and the statement returns how many rows
 * each part with `expect` changed. All parts see the same snapshot and none sees another's rows,
 * so a caller only combines parts that touch different rows and do not read each other's writes
 * (foreign keys are checked at the end of the statement, after every part). One part without
 * `expect` is sent as it is.
 *
 * With `atCommit`, the statement goes with the transaction's COMMIT (`sqlAtCommit`) and checks
 * the counts itself (`weft_expect_rows`): the caller must run it as the event's last write, and
 * the error of a wrong count comes from `withTenant`, before anything is committed.
 * @throws Error when `m` is not a transaction of `tenantId`, before anything is sent;
 * WriteInvariantError naming the run and `expect.what` when a part changed another
 * number of rows than expected; the driver's error when the statement fails.
 */
export async function runWrites(
  m: EntityManager,
  tenantId: string,
  runId: string,
  parts: readonly WritePart[],
  opts: { atCommit?: boolean } = {},
): Promise<void> {
  assertTenant(m, tenantId);
  if (parts.length === 0) return;
  if (parts.length === 1 && !parts[0]!.expect) {
    await (opts.atCommit ? sqlAtCommit : sql)(m, parts[0]!.text, parts[0]!.params);
    return;
  }
  const params: unknown[] = [];
  const ctes: string[] = [];
  const counts: string[] = [];
  parts.forEach((p, i) => {
    const offset = params.length;
    params.push(...p.params);
    const text = offset === 0 ? p.text : p.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    ctes.push(`w${i} AS (${text}${p.expect ? ' RETURNING 1' : ''})`);
  });
  parts.forEach((p, i) => {
    if (!p.expect) return;
    if (!opts.atCommit) {
      counts.push(`(SELECT count(*) FROM w${i})::int AS w${i}`);
      return;
    }
    params.push(p.expect.rows, expectation(runId, p.expect.rows, p.expect.what));
    counts.push(`weft_expect_rows((SELECT count(*) FROM w${i}), $${params.length - 1}::int, $${params.length}::text) AS w${i}`);
  });
  const text = `WITH ${ctes.join(',\n')}\nSELECT ${counts.length ? counts.join(', ') : '1 AS done'}`;
  if (opts.atCommit) {
    await sqlAtCommit(m, text, params);
    return;
  }
  const r = await sql<Record<string, number>>(m, text, params);
  parts.forEach((p, i) => {
    if (p.expect) expectRows(runId, p.expect.rows, r.rows[0]?.[`w${i}`], p.expect.what);
  });
}

/** `run <id>: expected exactly <n> <what>`, the message of a wrong count without its `matched …`. */
function expectation(runId: string, expected: number, what: string): string {
  return `run ${runId}: expected exactly ${expected === 1 ? 'one' : expected} ${what}`;
}

/**
 * One event's writes as one statement that checks its fence first and writes nothing when it
 * fails, without raising: the run row at `fence.seq` (locked, `FOR UPDATE`) and the reported task
 * RUNNING at its attempt under the lease token (locked). A row locked by another transaction
 * fails the fence at once (`SKIP LOCKED`): the report then waits for it alone on the locking path,
 * never holding up the statements it was committed with. A row another writer changed and
 * committed since the statement's snapshot (a cancel, a signal, a sweep) is read again as it now
 * is by the lock, and fails the fence.
 *
 * When the event takes an attempt (`fence.takeFrom`), `weft_may_take` decides, once the fence
 * holds. With `queued` given as parts, `parts` are written if it allows the take, else `queued`
 * (the same event without the take: its attempt QUEUED in the backlog); parts the two share are
 * written once either way. With `queued` = `'inline'`, `parts` carry both outcomes themselves
 * ({@link TOOK}) and are written whenever the fence holds. Without `queued`, nothing is written
 * when the take is refused.
 *
 * The statement returns one row: `ok` (the fence held), `took` (the take was allowed, or there was
 * none to ask for), and each expected count, checked by `weft_expect_rows` for the parts written
 * (a wrong count then raises: the stored run drifted). Undefined when a part has no gated form.
 */
export function fencedWrite(
  tenantId: string,
  runId: string,
  fence: WriteFence,
  parts: readonly WritePart[],
  queued?: readonly WritePart[] | 'inline',
): { text: string; params: unknown[] } | undefined {
  const alternative = queued === 'inline' ? undefined : queued;
  if ([...parts, ...(alternative ?? [])].some((p) => p.gated === undefined)) return undefined;
  const params: unknown[] = [tenantId, runId, fence.seq, fence.taskId, fence.attempt, fence.leaseToken.toLowerCase(), fence.takeFrom ?? null];
  const ctes = [
    `f AS MATERIALIZED (SELECT 1 FROM runs WHERE tenant_id = $1 AND id = $2 AND event_seq = $3::int FOR UPDATE SKIP LOCKED)`,
    `ft AS MATERIALIZED (SELECT 1 FROM tasks WHERE tenant_id = $1 AND id = $4::uuid AND run_id = $2 AND attempt = $5::int
                            AND status = 'RUNNING' AND lease_token = $6::uuid FOR NO KEY UPDATE SKIP LOCKED)`,
    `fence AS MATERIALIZED (SELECT EXISTS (SELECT 1 FROM f) AND EXISTS (SELECT 1 FROM ft) AS ok)`,
    `gate AS MATERIALIZED (SELECT ok, CASE WHEN ok THEN ($7::text IS NULL OR weft_may_take($7::text)) ELSE false END AS took FROM fence)`,
  ];
  // Which of the two writes each part belongs to, and so on which verdict it is written.
  const shared = alternative ? parts.filter((p) => alternative.some((q) => samePart(p, q))) : [];
  const taken = queued === 'inline' ? 'ok' : 'took';
  const gated: Array<{ part: WritePart; when: string }> = [
    ...parts.map((part) => ({ part, when: !alternative ? taken : shared.includes(part) ? 'ok' : 'took' })),
    ...(alternative ?? []).filter((q) => !shared.some((p) => samePart(p, q))).map((part) => ({ part, when: 'ok AND NOT took' })),
  ];
  // A step's statement is one of a handful of shapes: its text is built once per shape, and the
  // same string (whose hash and prepared-statement name are then known) is sent every time.
  const key = shapeKey(queued === 'inline' ? 'i' : alternative ? 'a' : 'n', gated);
  const known = SHAPES.get(key);
  if (known !== undefined) {
    gatedParams(runId, gated, params);
    return { text: known, params };
  }
  const counts = gatedWrites(runId, gated, '(SELECT took FROM gate)', ctes, params);
  const text = `WITH ${ctes.join(',\n')}\nSELECT (SELECT ok FROM gate) AS ok, (SELECT took FROM gate) AS took${counts.map((c) => `, ${c}`).join('')}`;
  if (SHAPES.size >= MAX_SHAPES) forgetShapes();
  SHAPES.set(key, text);
  return { text, params };
}

/** Fenced statements' texts by shape ({@link shapeKey}), at most {@link MAX_SHAPES}. */
const SHAPES = new Map<string, string>();
const MAX_SHAPES = 1_000;
/** A small number for each gated part text seen, so that a shape's key stays short. */
const PART_IDS = new Map<string, number>();

function forgetShapes(): void {
  SHAPES.clear();
  PART_IDS.clear();
}

/**
 * The key of a fenced statement's text: the form of the take (`mode`) and, in order, each part's
 * gated text (as a number), its parameters' count, the verdict it is written on and whether its
 * count is checked: what fixes the statement's text and numbering.
 */
function shapeKey(mode: string, gated: ReadonlyArray<{ part: WritePart; when: string }>): string {
  let key = mode;
  for (const { part, when } of gated) {
    let id = PART_IDS.get(part.gated!);
    if (id === undefined) {
      if (PART_IDS.size >= MAX_SHAPES * 4) forgetShapes();
      PART_IDS.set(part.gated!, (id = PART_IDS.size));
    }
    key += `|${id}:${part.params.length}:${when}:${part.expect ? 1 : 0}`;
  }
  return key;
}

/** Appends to `params` what {@link gatedWrites} appends for `gated`, without building any text. */
function gatedParams(runId: string, gated: ReadonlyArray<{ part: WritePart; when: string }>, params: unknown[]): void {
  for (const { part } of gated) pushPartParams(runId, part, params);
}

/** Appends part `p`'s parameters to `params`, then, when its count is checked, the count and its message (naming run `runId`). */
function pushPartParams(runId: string, p: WritePart, params: unknown[]): void {
  params.push(...p.params);
  if (p.expect) params.push(p.expect.rows, expectation(runId, p.expect.rows, p.expect.what));
}

/**
 * Appends each of `gated` to `ctes` as a data-modifying CTE `w<i>` of a statement whose CTE
 * `gate` holds the verdicts: its {@link GATE} as `(SELECT <when> FROM gate)`, its {@link TOOK} as
 * `took`, its parameters renumbered after `params` (to which they are appended). Returns the
 * select-list items that check, by `weft_expect_rows`, the count of each part with an `expect`
 * when its `when` held (the message names run `runId`).
 */
export function gatedWrites(runId: string, gated: ReadonlyArray<{ part: WritePart; when: string }>, took: string, ctes: string[], params: unknown[]): string[] {
  const counts: string[] = [];
  gated.forEach(({ part: p, when }, i) => {
    const offset = params.length;
    pushPartParams(runId, p, params);
    const text = renumbered(p.gated!, offset).replaceAll(GATE, `(SELECT ${when} FROM gate)`).replaceAll(TOOK, took);
    ctes.push(`w${i} AS (${text}${p.expect ? ' RETURNING 1' : ''})`);
    if (!p.expect) return;
    counts.push(
      `CASE WHEN (SELECT ${when} FROM gate) THEN weft_expect_rows((SELECT count(*) FROM w${i}), $${params.length - 1}::int, $${params.length}::text) END AS w${i}`,
    );
  });
  return counts;
}

/** True when `a` and `b` are the same write: one text, equal parameters. */
function samePart(a: WritePart, b: WritePart): boolean {
  return a.gated === b.gated && a.params.length === b.params.length && a.params.every((x, i) => sameValue(x, b.params[i]));
}

function sameValue(x: unknown, y: unknown): boolean {
  return x === y || (x instanceof Date && y instanceof Date && x.getTime() === y.getTime());
}

/** Gated part texts with their parameters renumbered after `offset` others, by text and offset (a step's parts are a handful of shapes). */
const RENUMBERED = new Map<string, Map<number, string>>();
const MAX_RENUMBERED = 1_000;

/** `gated` with `$n` as `$(n + offset)`. */
function renumbered(gated: string, offset: number): string {
  let byOffset = RENUMBERED.get(gated);
  let text = byOffset?.get(offset);
  if (text !== undefined) return text;
  text = gated.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
  if (!byOffset) {
    if (RENUMBERED.size >= MAX_RENUMBERED) RENUMBERED.clear();
    RENUMBERED.set(gated, (byOffset = new Map()));
  }
  byOffset.set(offset, text);
  return text;
}
