import type { MigrationInterface, QueryRunner } from 'typeorm';

const DISPATCH = 'weft_dispatch(text, timestamptz, int, int, int)';
const MAY_TAKE = 'weft_may_take(text)';
const BACKLOG = 'weft_backlog_queues(timestamptz)';
const PRUNE = 'weft_prune_rate_starts(timestamptz)';
const STALLED = 'weft_stalled_groups()';

/** Serializes every dispatch decision of the database (one transaction-level advisory lock). */
const DISPATCH_LOCK = 5_746_210_301;
/** Held rows a pass makes ready again at most, the earliest first. */
const RELEASE_BATCH = 200;
/** Backlog rows a pass looks at at most (admitted, held or found stale), so that one pass stays short under the lock. */
const CHECK_BUDGET = 400;

/**
 * The tenants with a ready backlog row on `p_queue`, by a skip scan of `outbox_ready`: one index
 * probe per tenant, however many rows each has.
 */
const READY_TENANTS = `
  WITH RECURSIVE rt AS (
    (SELECT o.tenant_id FROM public.outbox o
      WHERE o.queue = p_queue AND o.enqueued_at IS NULL AND o.hold_reason IS NULL
      ORDER BY o.tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT o.tenant_id FROM public.outbox o
             WHERE o.queue = p_queue AND o.enqueued_at IS NULL AND o.hold_reason IS NULL AND o.tenant_id > rt.tenant_id
             ORDER BY o.tenant_id LIMIT 1)
      FROM rt WHERE rt.tenant_id IS NOT NULL
  )`;

/**
 * Flow control: run slots by concurrency key, and fair dispatch of worker attempts.
 *
 * - A run of a workflow with `concurrency` joins a group (`runs.concurrency_group`: the scope and
 *   the key its start resolved; `runs.concurrency_key` the key as its author wrote it). The group's
 *   row in `concurrency_groups` is locked by every admission to it and holds the limit of the
 *   version last admitted; its active runs (RUNNING) and queued runs (QUEUED: no task yet, started
 *   when a slot frees, priority then oldest) are counted from `runs`, so no counter can leak.
 *
 * Fair dispatch: the backlog of every queue, and the one place that decides which task attempt
 * goes to a worker next.
 *
 * - A dispatched worker attempt is first `QUEUED`: its task row says so, and its outbox row is its
 *   place in the queue's backlog (`enqueued_at` NULL). It has no Bull job and no lease.
 *   `weft_dispatch(queue, …)` admits backlog rows, which makes their tasks `PENDING` with a
 *   dispatch lease and marks their outbox rows (`enqueued_at`); the caller then enqueues their
 *   jobs. The queue's Bull list therefore holds about one job per worker slot (the live workers'
 *   concurrency on the queue, at least `p_window_floor`), so the order of admission is the order
 *   workers take them in. A tenant back from idle (its share fell behind the queue's clock while
 *   it had nothing ready) has its first row admitted even into a full window, and its job goes
 *   ahead of the waiting ones (Bull priority): a quiet tenant waits for a free worker slot, not
 *   for a flooding tenant's window.
 * - The order: between tenants, weighted fair queueing by virtual time. Each queue has a virtual
 *   clock (`dispatch_queues.vclock`) and each tenant a virtual finish (`dispatch_shares.vfinish`);
 *   the ready tenant with the smallest virtual start (`greatest(vfinish, vclock)`) goes next, and
 *   its finish moves `1 / weight` past that start (`tenants.dispatch_weight`, 1–100); between equal
 *   starts, the tenant served least recently goes first. A tenant that had nothing ready starts
 *   at the clock again: idleness earns no credit. With unit-cost tasks
 *   this is deficit round robin with a quantum of the tenant's weight. Within a tenant: priority
 *   (`outbox.priority`, 1 first), then the oldest run (run ids are UUIDv7), then the row's order.
 * - Held rows (`hold_reason`): a retry's backoff (`BACKOFF`), a node's concurrency limit
 *   (`CONCURRENCY_LIMIT`) or rate limit (`RATE_LIMIT`), with a sentence (`hold_detail`) and the
 *   time to look again (`held_until`). They are out of the ready set until then. The transaction
 *   that frees a node slot (an attempt ends, is cancelled or goes back to the backlog) makes the
 *   best row held by that key ready at once (trigger `tasks_free_node_slot`). Node slots are
 *   counted from the task rows (`PENDING` or `RUNNING` with that key), so no counter can leak.
 *   A rate limit is a sliding window, by the database's clock, over `flow_rate_starts`, which a
 *   worker's claim writes when it starts an attempt; attempts admitted and not claimed yet count
 *   as starts to come, so jobs that wait for a worker (or for a worker to come back) never start
 *   more than the limit.
 * - `weft_may_take(queue)`: whether a worker's report may take its next attempt on `queue` at once
 *   (eager dispatch): the queue is not reserved for other tenants, and either no other tenant has
 *   a ready row on it or this tenant is the one fair order would pick next (then the take is
 *   charged to its share, as an admission would be).
 * - Every dispatch decision takes one advisory lock, so limits and shares are exact across any
 *   number of processes; a decision is a few index probes per admitted row.
 */
export class FairDispatch1765872000000 implements MigrationInterface {
  name = 'FairDispatch1765872000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tenants ADD COLUMN dispatch_weight smallint NOT NULL DEFAULT 1 CHECK (dispatch_weight BETWEEN 1 AND 100);
      CREATE POLICY claimer_dispatch_weights ON tenants FOR SELECT TO weft_claimer USING (true);
      GRANT SELECT (id, dispatch_weight) ON tenants TO weft_claimer;

      ALTER TABLE runs
        ADD COLUMN priority smallint NOT NULL DEFAULT 3 CHECK (priority BETWEEN 1 AND 5),
        ADD COLUMN concurrency_group text,
        ADD COLUMN concurrency_key text;
      CREATE INDEX runs_concurrency_groups ON runs (tenant_id, concurrency_group, status, priority, id) WHERE concurrency_group IS NOT NULL;

      CREATE TABLE concurrency_groups (
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        group_key text NOT NULL,
        scope text NOT NULL CHECK (scope IN ('workflow', 'tenant')),
        workflow_id text,
        key text NOT NULL,
        run_limit int NOT NULL CHECK (run_limit BETWEEN 1 AND 1000),
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, group_key)
      );
      CREATE INDEX concurrency_groups_workflow ON concurrency_groups (tenant_id, workflow_id, key);

      ALTER TABLE tasks
        ADD COLUMN flow_concurrency_key text,
        ADD COLUMN flow_concurrency_limit int,
        ADD COLUMN flow_rate_key text,
        ADD COLUMN flow_rate_limit int,
        ADD COLUMN flow_rate_per_seconds int;
      GRANT SELECT (flow_concurrency_key, flow_concurrency_limit, flow_rate_key, flow_rate_limit, flow_rate_per_seconds) ON tasks TO weft_claimer;
      GRANT UPDATE (status, updated_at) ON tasks TO weft_claimer;
      CREATE INDEX tasks_dispatched ON tasks (queue) WHERE status = 'PENDING' AND queue IS NOT NULL;
      CREATE INDEX tasks_node_slots ON tasks (tenant_id, flow_concurrency_key)
        WHERE status IN ('PENDING', 'RUNNING') AND flow_concurrency_key IS NOT NULL;
      CREATE INDEX tasks_rate_admitted ON tasks (tenant_id, flow_rate_key) WHERE status = 'PENDING' AND flow_rate_key IS NOT NULL;

      ALTER TABLE outbox
        ADD COLUMN priority smallint NOT NULL DEFAULT 3,
        ADD COLUMN hold_reason text CHECK (hold_reason IN ('BACKOFF', 'CONCURRENCY_LIMIT', 'RATE_LIMIT')),
        ADD COLUMN hold_detail text,
        ADD COLUMN held_until timestamptz,
        ADD COLUMN last_hold text;
      GRANT SELECT (queue, run_id, priority, hold_reason, hold_detail, held_until, last_hold) ON outbox TO weft_claimer;
      GRANT UPDATE (hold_reason, hold_detail, held_until, enqueued_at, last_hold) ON outbox TO weft_claimer;
      CREATE INDEX outbox_ready ON outbox (queue, tenant_id, priority, run_id, id) WHERE enqueued_at IS NULL AND hold_reason IS NULL;
      CREATE INDEX outbox_held ON outbox (queue, held_until) WHERE enqueued_at IS NULL AND hold_reason IS NOT NULL;
      CREATE INDEX outbox_held_keys ON outbox (tenant_id, task_id) WHERE enqueued_at IS NULL AND hold_reason = 'CONCURRENCY_LIMIT';

      CREATE TABLE dispatch_queues (
        queue text PRIMARY KEY,
        vclock double precision NOT NULL DEFAULT 0
      );
      GRANT SELECT, INSERT, UPDATE ON dispatch_queues TO weft_claimer;

      CREATE TABLE dispatch_shares (
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        queue text NOT NULL,
        vfinish double precision NOT NULL,
        served_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, queue)
      );
      CREATE TABLE flow_rate_starts (
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        rate_key text NOT NULL,
        started_at timestamptz NOT NULL,
        task_id uuid NOT NULL,
        attempt int NOT NULL
      );
      CREATE INDEX flow_rate_starts_window ON flow_rate_starts (tenant_id, rate_key, started_at);
      CREATE INDEX flow_rate_starts_age ON flow_rate_starts (started_at);
    `);
    for (const table of ['dispatch_shares', 'flow_rate_starts', 'concurrency_groups']) {
      await q.query(`
        ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant_isolation ON ${table} USING (tenant_id = weft_current_tenant()) WITH CHECK (tenant_id = weft_current_tenant());
        CREATE POLICY claimer_all_tenants ON ${table} FOR ALL TO weft_claimer USING (true) WITH CHECK (true);
        GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO weft_app;
        GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO weft_claimer;
      `);
    }
    await q.query(`GRANT SELECT (queues, concurrency, expires_at, draining_since) ON workers TO weft_claimer`);
    await q.query(`
      CREATE FUNCTION weft_free_node_slot() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        UPDATE public.outbox o SET hold_reason = NULL, hold_detail = NULL, held_until = NULL
         WHERE o.tenant_id = OLD.tenant_id AND o.id = (
           SELECT o2.id FROM public.outbox o2 JOIN public.tasks t ON t.tenant_id = o2.tenant_id AND t.id = o2.task_id
            WHERE o2.tenant_id = OLD.tenant_id AND o2.enqueued_at IS NULL AND o2.hold_reason = 'CONCURRENCY_LIMIT'
              AND t.flow_concurrency_key = OLD.flow_concurrency_key
            ORDER BY o2.priority, o2.run_id, o2.id
            LIMIT 1 FOR UPDATE OF o2 SKIP LOCKED);
        RETURN NULL;
      END $fn$;
      CREATE TRIGGER tasks_free_node_slot AFTER UPDATE OF status ON tasks FOR EACH ROW
        WHEN (OLD.flow_concurrency_key IS NOT NULL AND OLD.status IN ('PENDING', 'RUNNING') AND NEW.status NOT IN ('PENDING', 'RUNNING'))
        EXECUTE FUNCTION weft_free_node_slot();
    `);
    await q.query(dispatchFunction());
    await q.query(mayTakeFunction());
    await q.query(`
      CREATE FUNCTION weft_backlog_queues(p_now timestamptz) RETURNS TABLE (queue text)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          SELECT DISTINCT o.queue FROM public.outbox o
           WHERE o.enqueued_at IS NULL AND (o.hold_reason IS NULL OR o.held_until <= COALESCE(p_now, now()))
        $$;
      CREATE POLICY claimer_grouped_runs ON runs FOR SELECT TO weft_claimer USING (concurrency_group IS NOT NULL);
      GRANT SELECT (concurrency_group) ON runs TO weft_claimer;
      CREATE FUNCTION weft_stalled_groups() RETURNS TABLE (tenant_id uuid, group_key text)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          SELECT g.tenant_id, g.group_key FROM public.concurrency_groups g
           WHERE EXISTS (SELECT 1 FROM public.runs r WHERE r.tenant_id = g.tenant_id AND r.concurrency_group = g.group_key AND r.status = 'QUEUED')
             AND (SELECT count(*) FROM public.runs r
                   WHERE r.tenant_id = g.tenant_id AND r.concurrency_group = g.group_key AND r.status = 'RUNNING') < g.run_limit
        $$;
      CREATE FUNCTION weft_prune_rate_starts(p_before timestamptz) RETURNS int
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH d AS (DELETE FROM public.flow_rate_starts s WHERE s.started_at < p_before RETURNING 1) SELECT count(*)::int FROM d
        $$;
    `);
    for (const fn of [DISPATCH, MAY_TAKE, BACKLOG, PRUNE, STALLED]) {
      await q.query(`
        ALTER FUNCTION ${fn} OWNER TO weft_claimer;
        REVOKE ALL ON FUNCTION ${fn} FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION ${fn} TO weft_app;
      `);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER tasks_free_node_slot ON tasks;
      DROP FUNCTION weft_free_node_slot();
      DROP FUNCTION ${STALLED};
      DROP POLICY claimer_grouped_runs ON runs;
      REVOKE SELECT (concurrency_group) ON runs FROM weft_claimer;
      DROP FUNCTION ${PRUNE};
      DROP FUNCTION ${BACKLOG};
      DROP FUNCTION ${MAY_TAKE};
      DROP FUNCTION ${DISPATCH};
      REVOKE SELECT (queues, concurrency, expires_at, draining_since) ON workers FROM weft_claimer;
      DROP TABLE concurrency_groups;
      DROP INDEX runs_concurrency_groups;
      ALTER TABLE runs DROP COLUMN concurrency_key, DROP COLUMN concurrency_group;
      DROP TABLE flow_rate_starts;
      DROP TABLE dispatch_shares;
      DROP TABLE dispatch_queues;
      DROP INDEX outbox_held_keys;
      DROP INDEX outbox_held;
      DROP INDEX outbox_ready;
      REVOKE UPDATE (hold_reason, hold_detail, held_until, enqueued_at, last_hold) ON outbox FROM weft_claimer;
      REVOKE SELECT (queue, run_id, priority, hold_reason, hold_detail, held_until, last_hold) ON outbox FROM weft_claimer;
      ALTER TABLE outbox DROP COLUMN last_hold, DROP COLUMN held_until, DROP COLUMN hold_detail, DROP COLUMN hold_reason, DROP COLUMN priority;
      DROP INDEX tasks_rate_admitted;
      DROP INDEX tasks_node_slots;
      DROP INDEX tasks_dispatched;
      REVOKE UPDATE (status, updated_at) ON tasks FROM weft_claimer;
      ALTER TABLE tasks DROP COLUMN flow_rate_per_seconds, DROP COLUMN flow_rate_limit, DROP COLUMN flow_rate_key,
        DROP COLUMN flow_concurrency_limit, DROP COLUMN flow_concurrency_key;
      ALTER TABLE runs DROP COLUMN priority;
      DROP POLICY claimer_dispatch_weights ON tenants;
      REVOKE SELECT (id, dispatch_weight) ON tenants FROM weft_claimer;
      ALTER TABLE tenants DROP COLUMN dispatch_weight;
    `);
  }
}

/**
 * `weft_dispatch(queue, now, max, window_floor, lease_ms)`: admits up to `max` backlog rows of
 * `queue` in fair order, within the queue's free window. Returns a row per attempt it admitted
 * (`kind` 'admitted', with how long it waited since it was ready and why: its last hold's reason,
 * else QUEUE_BACKLOG) or held (`kind` 'held', with the reason), then one closing row (`kind`
 * 'end') with the earliest time a held row of the queue is due to be looked at again (`next_at`,
 * NULL when none) and the clock it used (`db_now`).
 */
function dispatchFunction(): string {
  return `
    CREATE FUNCTION weft_dispatch(p_queue text, p_now timestamptz, p_max int, p_window_floor int, p_lease_ms int)
      RETURNS TABLE (kind text, tenant_id uuid, task_id uuid, attempt int, outbox_id bigint, reason text, waited_ms double precision,
                     ahead boolean, next_at timestamptz, db_now timestamptz)
      LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
    AS $fn$
    #variable_conflict use_column
    DECLARE
      v_now timestamptz := COALESCE(p_now, clock_timestamp());
      v_vclock double precision;
      v_window int;
      v_free int;
      v_taken int := 0;
      v_checked int := 0;
      v_pick record;
      v_row record;
      v_found boolean;
      v_active int;
      v_edge timestamptz;
    BEGIN
      IF EXISTS (SELECT 1 FROM public.outbox o WHERE o.queue = p_queue AND o.enqueued_at IS NULL) THEN
        PERFORM pg_advisory_xact_lock(${DISPATCH_LOCK});
        INSERT INTO public.dispatch_queues (queue) VALUES (p_queue) ON CONFLICT (queue) DO NOTHING;
        SELECT d.vclock INTO v_vclock FROM public.dispatch_queues d WHERE d.queue = p_queue;
        -- Holds whose time came are ready again, a bounded batch a pass (the earliest first), so
        -- no tenant's pile of held rows makes one pass long for everyone.
        UPDATE public.outbox o SET hold_reason = NULL, hold_detail = NULL, held_until = NULL
         WHERE (o.tenant_id, o.id) IN (
           SELECT h.tenant_id, h.id FROM public.outbox h
            WHERE h.queue = p_queue AND h.enqueued_at IS NULL AND h.hold_reason IS NOT NULL AND h.held_until <= v_now
            ORDER BY h.held_until LIMIT ${RELEASE_BATCH});
        SELECT greatest(COALESCE(sum(w.concurrency), 0)::int, p_window_floor) INTO v_window
          FROM public.workers w WHERE p_queue = ANY (w.queues) AND w.expires_at > v_now AND w.draining_since IS NULL;
        v_free := v_window - (SELECT count(*)::int FROM public.tasks t WHERE t.queue = p_queue AND t.status = 'PENDING');
        WHILE v_taken < p_max LOOP
          ${READY_TENANTS}
          SELECT rt.tenant_id, greatest(COALESCE(s.vfinish, v_vclock), v_vclock) AS vstart, COALESCE(tn.dispatch_weight, 1) AS weight,
                 s.vfinish IS NULL OR s.vfinish < v_vclock AS was_idle
            INTO v_pick
            FROM rt
            LEFT JOIN public.dispatch_shares s ON s.tenant_id = rt.tenant_id AND s.queue = p_queue
            LEFT JOIN public.tenants tn ON tn.id = rt.tenant_id
           WHERE rt.tenant_id IS NOT NULL
           ORDER BY 2, s.served_at NULLS FIRST, rt.tenant_id
           LIMIT 1;
          EXIT WHEN NOT FOUND;
          -- A full window admits no more, but for a tenant back from idle: its one row goes ahead
          -- of the window (its next row is not idle any more), so a quiet tenant never waits for a
          -- flooding one's claims. A queue with no window at all (no worker, no floor) admits none.
          EXIT WHEN v_free <= 0 AND (NOT v_pick.was_idle OR v_window = 0);
          v_found := false;
          FOR v_row IN
            -- Every field cast to the type the statements below were planned with: a column whose
            -- type a later migration changes cannot break this session's cached plans.
            SELECT o.id::bigint AS id, o.tenant_id::uuid AS tenant_id, o.task_id::uuid AS task_id, o.attempt::int AS attempt,
                   t.status::text AS status, t.attempt::int AS task_attempt, t.flow_concurrency_key::text AS flow_concurrency_key,
                   t.flow_concurrency_limit::int AS flow_concurrency_limit, t.flow_rate_key::text AS flow_rate_key,
                   t.flow_rate_limit::int AS flow_rate_limit, t.flow_rate_per_seconds::int AS flow_rate_per_seconds,
                   o.last_hold::text AS last_hold, greatest(o.created_at, o.not_before)::timestamptz AS ready_at
              FROM public.outbox o
              LEFT JOIN public.tasks t ON t.tenant_id = o.tenant_id AND t.id = o.task_id
             WHERE o.queue = p_queue AND o.tenant_id = v_pick.tenant_id AND o.enqueued_at IS NULL AND o.hold_reason IS NULL
             ORDER BY o.priority, o.run_id, o.id
             LIMIT 50
          LOOP
            v_found := true;
            v_checked := v_checked + 1;
            IF v_row.status IS DISTINCT FROM 'QUEUED' OR v_row.task_attempt IS DISTINCT FROM v_row.attempt THEN
              -- The task moved on (cancelled, finished, retried, deleted): the row is done.
              UPDATE public.outbox o SET enqueued_at = v_now WHERE o.tenant_id = v_row.tenant_id AND o.id = v_row.id;
              CONTINUE;
            END IF;
            IF v_row.flow_concurrency_key IS NOT NULL THEN
              SELECT count(*)::int INTO v_active FROM public.tasks t
               WHERE t.tenant_id = v_row.tenant_id AND t.flow_concurrency_key = v_row.flow_concurrency_key AND t.status IN ('PENDING', 'RUNNING');
              IF v_active >= v_row.flow_concurrency_limit THEN
                UPDATE public.outbox o SET hold_reason = 'CONCURRENCY_LIMIT', last_hold = 'CONCURRENCY_LIMIT', held_until = v_now + interval '5 seconds',
                       hold_detail = format('concurrency limit %s reached for key "%s" (%s active)', v_row.flow_concurrency_limit, v_row.flow_concurrency_key, v_active)
                 WHERE o.tenant_id = v_row.tenant_id AND o.id = v_row.id;
                kind := 'held'; reason := 'CONCURRENCY_LIMIT'; tenant_id := v_row.tenant_id; task_id := v_row.task_id;
                attempt := v_row.attempt; outbox_id := v_row.id; waited_ms := NULL; ahead := NULL; next_at := NULL; db_now := v_now;
                RETURN NEXT;
                -- A hold costs the tenant its turn, as an admission would: a pile of held rows
                -- is looked at one a turn, at the tenant's share, never ahead of the others.
                INSERT INTO public.dispatch_shares AS s (tenant_id, queue, vfinish, served_at)
                  VALUES (v_row.tenant_id, p_queue, v_pick.vstart + 1.0 / v_pick.weight, clock_timestamp())
                  ON CONFLICT (tenant_id, queue) DO UPDATE SET vfinish = EXCLUDED.vfinish, served_at = EXCLUDED.served_at;
                v_vclock := greatest(v_vclock, v_pick.vstart);
                EXIT;
              END IF;
            END IF;
            IF v_row.flow_rate_key IS NOT NULL THEN
              -- Starts are recorded by the workers' claims: admitted attempts not claimed yet will
              -- start, so they take their place in the window now.
              SELECT count(*)::int INTO v_active FROM public.tasks t
               WHERE t.tenant_id = v_row.tenant_id AND t.flow_rate_key = v_row.flow_rate_key AND t.status = 'PENDING';
              v_edge := NULL;
              IF v_active < v_row.flow_rate_limit THEN
                SELECT s.started_at INTO v_edge FROM public.flow_rate_starts s
                 WHERE s.tenant_id = v_row.tenant_id AND s.rate_key = v_row.flow_rate_key
                   AND s.started_at > v_now - v_row.flow_rate_per_seconds * interval '1 second'
                 ORDER BY s.started_at DESC OFFSET v_row.flow_rate_limit - v_active - 1 LIMIT 1;
                IF FOUND THEN
                  v_edge := v_edge + v_row.flow_rate_per_seconds * interval '1 second';
                END IF;
              ELSE
                -- The window is full of admitted attempts: look again once they have started.
                v_edge := v_now + least(v_row.flow_rate_per_seconds, 5) * interval '1 second';
              END IF;
              IF v_edge IS NOT NULL THEN
                UPDATE public.outbox o SET hold_reason = 'RATE_LIMIT', last_hold = 'RATE_LIMIT', held_until = v_edge,
                       hold_detail = CASE WHEN v_active >= v_row.flow_rate_limit
                         THEN format('rate limit "%s" %s per %s s, %s admitted attempts not started yet', v_row.flow_rate_key,
                                     v_row.flow_rate_limit, v_row.flow_rate_per_seconds, v_active)
                         ELSE format('rate limit "%s" %s per %s s, next start %s', v_row.flow_rate_key, v_row.flow_rate_limit,
                                     v_row.flow_rate_per_seconds, to_char(v_edge AT TIME ZONE 'UTC', 'HH24:MI:SS.MS"Z"')) END
                 WHERE o.tenant_id = v_row.tenant_id AND o.id = v_row.id;
                kind := 'held'; reason := 'RATE_LIMIT'; tenant_id := v_row.tenant_id; task_id := v_row.task_id;
                attempt := v_row.attempt; outbox_id := v_row.id; waited_ms := NULL; ahead := NULL; next_at := NULL; db_now := v_now;
                RETURN NEXT;
                -- A hold costs the tenant its turn, as an admission would: a pile of held rows
                -- is looked at one a turn, at the tenant's share, never ahead of the others.
                INSERT INTO public.dispatch_shares AS s (tenant_id, queue, vfinish, served_at)
                  VALUES (v_row.tenant_id, p_queue, v_pick.vstart + 1.0 / v_pick.weight, clock_timestamp())
                  ON CONFLICT (tenant_id, queue) DO UPDATE SET vfinish = EXCLUDED.vfinish, served_at = EXCLUDED.served_at;
                v_vclock := greatest(v_vclock, v_pick.vstart);
                EXIT;
              END IF;
            END IF;
            UPDATE public.outbox o SET enqueued_at = v_now WHERE o.tenant_id = v_row.tenant_id AND o.id = v_row.id;
            UPDATE public.tasks t SET status = 'PENDING', updated_at = v_now, lease_expires_at = v_now + p_lease_ms * interval '1 millisecond'
             WHERE t.tenant_id = v_row.tenant_id AND t.id = v_row.task_id AND t.attempt = v_row.attempt AND t.status = 'QUEUED';
            INSERT INTO public.dispatch_shares AS s (tenant_id, queue, vfinish, served_at)
              VALUES (v_row.tenant_id, p_queue, v_pick.vstart + 1.0 / v_pick.weight, clock_timestamp())
              ON CONFLICT (tenant_id, queue) DO UPDATE SET vfinish = EXCLUDED.vfinish, served_at = EXCLUDED.served_at;
            -- A tenant back from idle (nothing of it was ready while the clock moved past its share):
            -- this first job of its goes ahead of the window's jobs, not behind them.
            ahead := v_pick.was_idle;
            v_vclock := greatest(v_vclock, v_pick.vstart);
            kind := 'admitted'; tenant_id := v_row.tenant_id; task_id := v_row.task_id; attempt := v_row.attempt; outbox_id := v_row.id;
            reason := COALESCE(v_row.last_hold, 'QUEUE_BACKLOG');
            waited_ms := greatest(0, extract(epoch FROM v_now - v_row.ready_at) * 1000);
            next_at := NULL; db_now := v_now;
            RETURN NEXT;
            v_free := v_free - 1;
            v_taken := v_taken + 1;
            EXIT;
          END LOOP;
          EXIT WHEN NOT v_found OR v_checked >= ${CHECK_BUDGET};
        END LOOP;
        UPDATE public.dispatch_queues d SET vclock = v_vclock WHERE d.queue = p_queue AND d.vclock < v_vclock;
      END IF;
      kind := 'end'; tenant_id := NULL; task_id := NULL; attempt := NULL; outbox_id := NULL; reason := NULL; waited_ms := NULL; ahead := NULL; db_now := v_now;
      SELECT min(o.held_until) INTO next_at FROM public.outbox o WHERE o.queue = p_queue AND o.enqueued_at IS NULL AND o.hold_reason IS NOT NULL;
      RETURN NEXT;
    END
    $fn$`;
}

/** `weft_may_take(queue)`: see the migration's description. */
function mayTakeFunction(): string {
  return `
    CREATE FUNCTION weft_may_take(p_queue text) RETURNS boolean
      LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
    AS $fn$
    DECLARE
      v_me uuid := public.weft_current_tenant();
      v_vclock double precision;
      v_mine double precision;
      v_other double precision;
      v_weight int;
    BEGIN
      IF EXISTS (SELECT 1 FROM public.queue_reservations r WHERE r.queue = p_queue)
         AND NOT EXISTS (SELECT 1 FROM public.queue_reservations r WHERE r.queue = p_queue AND r.tenant_id = v_me) THEN
        RETURN false;
      END IF;
      IF NOT EXISTS (SELECT 1 FROM public.outbox o WHERE o.queue = p_queue AND o.enqueued_at IS NULL AND o.hold_reason IS NULL AND o.tenant_id < v_me)
         AND NOT EXISTS (SELECT 1 FROM public.outbox o WHERE o.queue = p_queue AND o.enqueued_at IS NULL AND o.hold_reason IS NULL AND o.tenant_id > v_me) THEN
        RETURN true;
      END IF;
      SELECT COALESCE(max(d.vclock), 0) INTO v_vclock FROM public.dispatch_queues d WHERE d.queue = p_queue;
      SELECT greatest(COALESCE(max(s.vfinish), v_vclock), v_vclock) INTO v_mine
        FROM public.dispatch_shares s WHERE s.tenant_id = v_me AND s.queue = p_queue;
      ${READY_TENANTS}
      SELECT min(greatest(COALESCE(s.vfinish, v_vclock), v_vclock)) INTO v_other
        FROM rt LEFT JOIN public.dispatch_shares s ON s.tenant_id = rt.tenant_id AND s.queue = p_queue
       WHERE rt.tenant_id IS NOT NULL AND rt.tenant_id <> v_me;
      -- A tie goes to the tenant that waits: this one is being served as it asks.
      IF v_other IS NOT NULL AND v_mine >= v_other THEN
        RETURN false;
      END IF;
      SELECT COALESCE(max(tn.dispatch_weight), 1) INTO v_weight FROM public.tenants tn WHERE tn.id = v_me;
      INSERT INTO public.dispatch_shares AS s (tenant_id, queue, vfinish, served_at)
        VALUES (v_me, p_queue, v_mine + 1.0 / v_weight, clock_timestamp())
        ON CONFLICT (tenant_id, queue) DO UPDATE SET vfinish = EXCLUDED.vfinish, served_at = EXCLUDED.served_at;
      RETURN true;
    END
    $fn$`;
}
