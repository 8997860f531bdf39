import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { publish, startE2E, type E2E } from '../../../test/support/e2e-platform.js';
import { cli, type CliResult } from '../../../test/support/weft-cli.js';

/**
 * `weft schedules …` against a whole Weft (API, worker, scheduler polling every 50 ms): create
 * with a cron expression in a zone and with an interval, list, describe with the upcoming times
 * in the zone and in UTC, pause and unpause with a note, trigger (a run started, one skipped,
 * one that cannot start), `runs --schedule`, a backfill followed to its end, delete; and every
 * usage error, said before any request, and the API's refusals.
 */
describe('weft schedules', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  /** Runs `weft <args>` against the platform with the tenant's key in the environment. */
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);
  /** The id a `schedules create` printed. */
  const createdId = (r: CliResult): string => {
    expect(r).toMatchObject({ code: 0, stderr: '' });
    return /^schedule (\S+) created: /.exec(r.stdout)![1]!;
  };
  /** The lines of a command's stdout. */
  const lines = (r: CliResult): string[] => r.stdout.trimEnd().split('\n');
  let kolkata: string;
  let hourly: string;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('schedules-cli'));
    // A FORK alone completes as the run starts: a run that needs no worker.
    await publish(client, 'nightly', { nodes: [{ node_id: 'a', type: 'FORK' }], edges: [] });
    await publish(client, 'approval', { nodes: [{ node_id: 'approval', type: 'WAIT_FOR_EVENT', spec: { event: 'approve' } }], edges: [] });
  });
  afterAll(() => e2e.close());

  describe('create', () => {
    it('creates a cron schedule in a time zone with every option, and says its next fire time', async () => {
      const r = await weft(
        'schedules',
        'create',
        '--workflow',
        'nightly',
        '--cron',
        '0 9 * * *',
        '--tz',
        'Asia/Kolkata',
        '--overlap',
        'ALLOW_ALL',
        '--catch-up',
        '5m',
        '--jitter',
        '10s',
        '--input',
        '{"region": "eu"}',
        '--config',
        '{"shop": "x"}',
        '--note',
        'morning report',
        '--end',
        '2099-01-01T00:00:00Z',
      );
      kolkata = createdId(r);
      expect(r.stdout).toMatch(/^schedule \S+ created: 0 9 \* \* \* \(Asia\/Kolkata\), workflow nightly; next fire \d{4}-\d\d-\d\dT03:30:00Z\n$/);
      const { schedule } = await client.request(
        `query($id: ID!) { schedule(id: $id) { cron timeZone overlapPolicy catchUpSeconds jitterSeconds input config note endAt paused version } }`,
        { id: kolkata },
      );
      expect(schedule).toEqual({
        cron: '0 9 * * *',
        timeZone: 'Asia/Kolkata',
        overlapPolicy: 'ALLOW_ALL',
        catchUpSeconds: 300,
        jitterSeconds: 10,
        input: { region: 'eu' },
        config: { shop: 'x' },
        note: 'morning report',
        endAt: '2099-01-01T00:00:00.000Z',
        paused: false,
        version: null,
      });
    });

    it('creates an interval schedule, paused, printing the API object with -o json', async () => {
      const r = await weft('schedules', 'create', '--workflow', 'nightly', '--every', '1h30m', '--paused', '--version', '1', '-o', 'json');
      expect(r).toMatchObject({ code: 0, stderr: '' });
      const s = JSON.parse(r.stdout);
      expect(s).toMatchObject({
        workflowId: 'nightly',
        cron: null,
        intervalSeconds: 5400,
        timeZone: 'UTC',
        version: 1,
        paused: true,
        overlapPolicy: 'SKIP',
        catchUpSeconds: 60,
      });
      hourly = s.id;
    });
  });

  describe('list', () => {
    it('prints one row per schedule: spec, overlap, paused, next and last fire, fired/skipped', async () => {
      const r = await weft('schedules', 'list');
      expect(r).toMatchObject({ code: 0, stderr: '' });
      const [header, ...rows] = lines(r);
      expect(header).toMatch(/^ID\s+WORKFLOW\s+SPEC\s+OVERLAP\s+PAUSED\s+NEXT FIRE\s+LAST FIRE\s+FIRED\/SKIPPED$/);
      expect(rows.find((l) => l.startsWith(kolkata))).toMatch(
        /^\S+\s+nightly\s+0 9 \* \* \* \(Asia\/Kolkata\)\s+allow_all\s+no\s+\d{4}-\d\d-\d\dT03:30:00Z\s+-\s+0\/0$/,
      );
      expect(rows.find((l) => l.startsWith(hourly))).toMatch(/^\S+\s+nightly\s+every 1h30m\s+skip\s+yes\s+-\s+-\s+0\/0$/);
    });

    it('filters by --workflow, and prints the API objects with -o json', async () => {
      const other = createdId(await weft('schedules', 'create', '--workflow', 'approval', '--cron', '@yearly'));
      const json = JSON.parse((await weft('schedules', 'list', '--workflow', 'approval', '-o', 'json')).stdout);
      expect(json.map((s: { id: string }) => s.id)).toEqual([other]);
      expect(lines(await weft('schedules', 'list', '--workflow', 'approval'))).toHaveLength(2);
      expect((await weft('schedules', 'delete', other)).code).toBe(0);
    });

    it("pages past the API's page of 50, in creation order", async () => {
      await publish(client, 'many', { nodes: [{ node_id: 'a', type: 'FORK' }], edges: [] });
      const ids: string[] = [];
      for (let i = 0; i < 51; i++) {
        const r = await client.request(`mutation { createSchedule(input: {workflowId: "many", cron: "@yearly", paused: true}) { id } }`);
        ids.push(r.createSchedule.id);
      }
      const json = JSON.parse((await weft('schedules', 'list', '--workflow', 'many', '-o', 'json')).stdout);
      expect(json.map((s: { id: string }) => s.id)).toEqual(ids);
    });
  });

  describe('describe', () => {
    it('shows every field and the upcoming times in the zone and in UTC', async () => {
      const r = await weft('schedules', 'describe', kolkata, '--upcoming', '3');
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toContain(`schedule    ${kolkata}\n`);
      expect(r.stdout).toMatch(
        /\nworkflow\s+nightly \(the workflow's default version at each fire\)\nspec\s+cron 0 9 \* \* \* in Asia\/Kolkata\noverlap\s+allow_all\ncatch-up\s+5m\njitter\s+10s\n/,
      );
      expect(r.stdout).toMatch(/\nend\s+2099-01-01T00:00:00Z\ninput\s+\{"region":"eu"\}\nconfig\s+\{"shop":"x"\}\nnote\s+morning report\npaused\s+no\n/);
      expect(r.stdout).toMatch(/\nfired\s+0\nskipped\s+0\n/);
      const table = r.stdout.split('\n\n')[1]!.trimEnd().split('\n');
      expect(table[0]).toMatch(/^UPCOMING \(Asia\/Kolkata\)\s+UTC$/);
      expect(table).toHaveLength(4);
      const days = table.slice(1).map((l) => {
        const [local, utc] = l.split(/\s{2,}/);
        expect(local).toMatch(/^\d{4}-\d\d-\d\dT09:00:00\+05:30$/);
        expect(utc).toBe(new Date(local!).toISOString().replace('.000Z', 'Z'));
        return Date.parse(utc!);
      });
      expect([days[1]! - days[0]!, days[2]! - days[1]!]).toEqual([86_400_000, 86_400_000]);
      expect(r.stdout).toContain('\nno runs yet\n\nno backfills\n');
    });

    it('prints the schedule with upcoming, recentRuns and backfills with -o json', async () => {
      const json = JSON.parse((await weft('schedules', 'describe', kolkata, '-o', 'json', '--upcoming', '7')).stdout);
      const { schedule } = await client.request(`query($id: ID!) { schedule(id: $id) { upcoming(count: 7) } }`, { id: kolkata });
      expect(json).toMatchObject({ id: kolkata, upcoming: schedule.upcoming, recentRuns: [], backfills: [], skipped: { overlap: 0, missed: 0 } });
    });

    it('shows a UTC schedule in one column', async () => {
      const r = await weft('schedules', 'describe', hourly);
      expect(r.stdout).toMatch(/\nspec\s+every 1h30m\n/);
      expect(r.stdout).toMatch(/\nworkflow\s+nightly version 1\n/);
      expect(r.stdout).toMatch(/\nUPCOMING \(UTC\)\n(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n){5}\n/);
    });
  });

  describe('pause and unpause', () => {
    it('record the note and the key, shown by describe and list', async () => {
      const p = await weft('schedules', 'pause', kolkata, '--note', 'db migration');
      expect(p).toMatchObject({ code: 0, stderr: '' });
      expect(p.stdout).toMatch(new RegExp(`^schedule ${kolkata} paused at \\S+Z by admin: db migration\\n$`));
      const d = await weft('schedules', 'describe', kolkata);
      expect(d.stdout).toMatch(/\npaused\s+yes, since \S+Z by admin: db migration\nnext fire\s+- \(paused; unpausing computes it from then\)\n/);
      expect(lines(await weft('schedules', 'list')).find((l) => l.startsWith(kolkata))).toMatch(/\s+allow_all\s+yes\s+-\s+-\s+0\/0$/);

      const u = await weft('schedules', 'unpause', kolkata, '--note', 'done');
      expect(u.stdout).toMatch(new RegExp(`^schedule ${kolkata} unpaused by admin: done; next fire \\d{4}-\\d\\d-\\d\\dT03:30:00Z\\n$`));
      expect((await weft('schedules', 'describe', kolkata)).stdout).toMatch(/\npaused\s+no \(last unpaused by admin: done\)\nnext fire\s+\S+T03:30:00Z\n/);
    });
  });

  describe('trigger', () => {
    it('prints the run it started, which runs --schedule lists and describe shows', async () => {
      const r = await weft('schedules', 'trigger', kolkata);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      const [, runId, nominal] = /^run (\S+) started \(nominal time (\S+)\)\n$/.exec(r.stdout)!;
      const runs = await weft('runs', '--schedule', kolkata);
      expect(lines(runs)).toEqual([expect.stringMatching(/^ID\s+WORKFLOW/), expect.stringMatching(new RegExp(`^${runId}\\s+nightly\\s+1\\s+SUCCEEDED\\s`))]);
      const json = JSON.parse((await weft('runs', '--schedule', kolkata, '-o', 'json')).stdout);
      expect(json).toEqual([
        expect.objectContaining({ id: runId, scheduleId: kolkata, input: { region: 'eu', schedule: { id: kolkata, nominalTime: json[0].nominalTime } } }),
      ]);
      expect(json[0].nominalTime.replace(/\.\d{3}Z$/, 'Z')).toBe(nominal);

      const d = await weft('schedules', 'describe', kolkata);
      expect(d.stdout).toMatch(new RegExp(`\\nlast fire\\s+\\S+Z \\(nominal ${nominal}, run ${runId}\\)\\n`));
      expect(d.stdout).toMatch(
        new RegExp(`\\nRUN\\s+STATUS\\s+VERSION\\s+NOMINAL TIME\\s+CREATED\\s+DURATION\\n${runId}\\s+SUCCEEDED\\s+1\\s+${nominal}\\s+\\S+Z\\s+\\S+\\n`),
      );
      expect(lines(await weft('schedules', 'list')).find((l) => l.startsWith(kolkata))).toMatch(/\s+1\/0$/);
    });

    it('says a fire was skipped, and why, while the previous run still runs', async () => {
      const id = createdId(await weft('schedules', 'create', '--workflow', 'approval', '--cron', '@yearly'));
      expect((await weft('schedules', 'trigger', id)).stdout).toMatch(/^run \S+ started/);
      const r = await weft('schedules', 'trigger', id);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(/^skipped \(nominal time \S+Z\): the schedule's previous run is still running and its overlap policy is skip\n$/);
      expect((await weft('schedules', 'describe', id)).stdout).toMatch(/\nfired\s+1\nskipped\s+1 \(overlap 1\)\n/);
    });

    it('says a fire was buffered under buffer_one, and which run cancel_other cancelled', async () => {
      const buffered = createdId(await weft('schedules', 'create', '--workflow', 'approval', '--cron', '@yearly', '--overlap', 'buffer_one'));
      expect((await weft('schedules', 'trigger', buffered)).stdout).toMatch(/^run \S+ started/);
      expect((await weft('schedules', 'trigger', buffered)).stdout).toMatch(
        /^buffered \(nominal time \S+Z\): the schedule's previous run is still running; this fire starts when it ends \(overlap policy buffer_one\)\n$/,
      );
      const cancelling = createdId(await weft('schedules', 'create', '--workflow', 'approval', '--cron', '@yearly', '--overlap', 'cancel_other'));
      const [, first] = /^run (\S+) started/.exec((await weft('schedules', 'trigger', cancelling)).stdout)!;
      const r = await weft('schedules', 'trigger', cancelling);
      expect(r.stdout).toMatch(
        new RegExp(`^run ${first} cancelled first \\(overlap policy cancel_other\\)\\nrun (?!${first})\\S+ started \\(nominal time \\S+Z\\)\\n$`),
      );
    });

    it('says why a run could not start, exit code 1', async () => {
      await publish(client, 'legacy', { nodes: [{ node_id: 'a', type: 'FORK' }], edges: [] });
      await publish(client, 'legacy', { nodes: [{ node_id: 'b', type: 'FORK' }], edges: [] });
      const id = createdId(await weft('schedules', 'create', '--workflow', 'legacy', '--version', '1', '--cron', '@yearly'));
      expect((await weft('deprecate', 'legacy', '1')).code).toBe(0);
      const r = await weft('schedules', 'trigger', id);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/^skipped \(nominal time \S+Z\): the run could not start: .*deprecated/);
    });
  });

  describe('backfill and delete', () => {
    let id: string;
    beforeAll(async () => {
      // Its clock fires from 2099 on only: the runs are the backfill's.
      id = createdId(await weft('schedules', 'create', '--workflow', 'nightly', '--cron', '*/10 * * * *', '--start', '2099-01-01T00:00:00Z'));
    });

    it('backfills a small range, --watch following it to the end', async () => {
      const r = await weft('schedules', 'backfill', id, '--from', '2030-01-01T00:00:00Z', '--to', '2030-01-01T01:00:00Z', '--watch');
      expect(r).toMatchObject({ code: 0, stderr: '' });
      const out = lines(r);
      const [, backfillId] = new RegExp(`^backfill (\\S+) of schedule ${id}: 7 fire times from 2030-01-01T00:00:00Z to 2030-01-01T01:00:00Z$`).exec(out[0]!)!;
      expect(out[1]).toMatch(new RegExp(`^backfill ${backfillId}: \\d of 7 done \\(\\d started, 0 skipped, \\d pending\\)$`));
      expect(out.at(-2)).toBe(`backfill ${backfillId}: 7 of 7 done (7 started, 0 skipped, 0 pending)`);
      expect(out.at(-1)).toMatch(new RegExp(`^backfill ${backfillId} finished at \\S+Z: 7 started, 0 skipped$`));

      const runs = JSON.parse((await weft('runs', '--schedule', id, '-o', 'json')).stdout);
      expect(runs.map((x: { nominalTime: string }) => x.nominalTime).sort()).toEqual(
        [0, 10, 20, 30, 40, 50, 60].map((m) => new Date(Date.UTC(2030, 0, 1, 0, m)).toISOString()),
      );
      const d = await weft('schedules', 'describe', id);
      expect(d.stdout).toMatch(
        new RegExp(
          `\\nBACKFILL\\s+FROM\\s+TO\\s+PROGRESS\\s+STATUS\\n${backfillId}\\s+2030-01-01T00:00:00Z\\s+2030-01-01T01:00:00Z\\s+7 of 7 done \\(7 started, 0 skipped, 0 pending\\)\\s+finished \\S+Z\\n`,
        ),
      );
    });

    it("prints the API's refusal of a range with too many fire times", async () => {
      // Every ten seconds for 28 hours: over 10,080 times, counted by arithmetic.
      const often = createdId(await weft('schedules', 'create', '--workflow', 'nightly', '--every', '10s', '--paused'));
      const r = await weft('schedules', 'backfill', often, '--from', '2030-01-01T00:00:00Z', '--to', '2030-01-02T04:00:00Z');
      expect(r).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'error: BAD_USER_INPUT: to the range holds more than 10000 fire times; backfill it in parts\n  - to: the range holds more than 10000 fire times; backfill it in parts\n',
      });
    });

    it('prints the backfill id at once without --watch', async () => {
      const r = await weft('schedules', 'backfill', id, '--from', '2031-01-01T00:00:00Z', '--to', '2031-01-01T00:00:00Z');
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(new RegExp(`^backfill \\S+ of schedule ${id}: 1 fire time from 2031-01-01T00:00:00Z to 2031-01-01T00:00:00Z\\n$`));
    });

    it('deletes the schedule and its backfills, saying what it deleted; its runs stay', async () => {
      // Wait for the one-time backfill, so the count of runs is settled.
      for (let i = 0; i < 400 && !/\b8\/0$/m.test((await weft('schedules', 'list')).stdout); i++) await new Promise((r) => setTimeout(r, 25));
      const r = await weft('schedules', 'delete', id);
      expect(r).toEqual({
        code: 0,
        stderr: '',
        stdout: `schedule ${id} deleted (*/10 * * * * (UTC), workflow nightly) and its 2 backfills; the 8 runs it started stay\n`,
      });
      const gone = await weft('schedules', 'describe', id);
      expect(gone).toEqual({ code: 1, stdout: '', stderr: `error: NOT_FOUND: schedule ${id} not found\n` });
      expect(JSON.parse((await weft('runs', '--schedule', id, '-o', 'json')).stdout)).toHaveLength(8);
      expect((await weft('schedules', 'delete', id)).stderr).toBe(`error: NOT_FOUND: schedule ${id} not found\n`);
    });
  });

  describe('mistakes', () => {
    it('are usage errors naming the flag, exit code 2, before any request', async () => {
      const cases: [string[], string][] = [
        [['create', '--workflow', 'w'], 'error: give --cron EXPR or --every LENGTH (30s, 5m, 1h)'],
        [['create', '--workflow', 'w', '--cron', '@daily', '--every', '5m'], 'error: give --cron or --every, not both'],
        [['create', '--cron', '@daily'], "error: required option '--workflow <id>' not specified"],
        [['create', 'nightly-report', '--workflow', 'w', '--cron', '@daily'], "error: too many arguments for 'create'. Expected 0 arguments but got 1."],
        [
          ['create', '--workflow', 'w', '--every', '5x'],
          "error: option '--every <length>' argument '5x' is invalid. --every must be a length of time: 30s, 5m, 1h, 1h30m, 1d",
        ],
        [['create', '--workflow', 'w', '--every', '0s'], "error: option '--every <length>' argument '0s' is invalid. --every must be at least 1s"],
        [
          ['create', '--workflow', 'w', '--every', '5m', '--tz', 'Europe/Paris'],
          'error: --tz applies to --cron only: an --every interval counts seconds, whatever the zone',
        ],
        [['create', '--workflow', 'w', '--cron', '61 * * * *'], 'error: --cron "61 * * * *": invalid cron expression'],
        [
          ['create', '--workflow', 'w', '--cron', '* * * *'],
          'error: --cron "* * * *": a cron expression has 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), not 4',
        ],
        [
          ['create', '--workflow', 'w', '--cron', '@daily', '--tz', 'Mars/Olympus_Mons'],
          "error: option '--tz <zone>' argument 'Mars/Olympus_Mons' is invalid. --tz must be an IANA time zone",
        ],
        [
          ['create', '--workflow', 'w', '--cron', '@daily', '--overlap', 'never'],
          "error: option '--overlap <policy>' argument 'never' is invalid. must be one of skip, buffer_one, buffer_all, cancel_other, allow_all",
        ],
        [['create', '--workflow', 'w', '--cron', '@daily', '--jitter', '2d'], 'error: --jitter must be at most 1d'],
        [
          ['create', '--workflow', 'w', '--cron', '@daily', '--catch-up', 'soon'],
          "error: option '--catch-up <length>' argument 'soon' is invalid. --catch-up must be a length of time",
        ],
        [
          ['create', '--workflow', 'w', '--cron', '@daily', '--start', '2030-01-01'],
          "error: option '--start <time>' argument '2030-01-01' is invalid. --start must be an RFC 3339 time with an offset",
        ],
        [
          ['create', '--workflow', 'w', '--cron', '@daily', '--start', '2030-02-01T00:00:00Z', '--end', '2030-01-01T00:00:00Z'],
          'error: --end must be after --start (2030-02-01T00:00:00.000Z)',
        ],
        [
          ['create', '--workflow', 'w', '--cron', '@daily', '--version', '0'],
          "error: option '--version <n>' argument '0' is invalid. --version must be a positive integer",
        ],
        [
          ['create', '--workflow', 'w', '--cron', '@daily', '--input', '{bad'],
          "error: option '--input <json>' argument '{bad' is invalid. --input must be JSON",
        ],
        [['create', '--workflow', 'w', '--cron', '@daily', '--note', 'x'.repeat(2001)], 'error: --note must be at most 2000 characters (it has 2001)'],
        [['pause', 's', '--note', 'x'.repeat(2001)], 'error: --note must be at most 2000 characters (it has 2001)'],
        [['unpause', 's', '--note', 'x'.repeat(2001)], 'error: --note must be at most 2000 characters (it has 2001)'],
        [['describe', 's', '--upcoming', '101'], "error: option '--upcoming <n>' argument '101' is invalid. --upcoming must be a whole number from 1 to 100"],
        [['backfill', 's', '--from', '2030-01-02T00:00:00Z'], "error: required option '--to <time>' not specified"],
        [
          ['backfill', 's', '--from', 'yesterday', '--to', '2030-01-01T00:00:00Z'],
          "error: option '--from <time>' argument 'yesterday' is invalid. --from must be an RFC 3339 time",
        ],
        [
          ['backfill', 's', '--from', '2030-01-02T00:00:00Z', '--to', '2030-01-01T00:00:00Z'],
          'error: --to 2030-01-01T00:00:00Z is before --from 2030-01-02T00:00:00Z',
        ],
        [['pause'], "error: missing required argument 'id'"],
      ];
      for (const [args, message] of cases) {
        // Nothing listens on port 9: a request would fail with exit code 1, not 2.
        const r = await cli({ WEFT_API_KEY: 'k', WEFT_URL: 'http://127.0.0.1:9/graphql' }, 'schedules', ...args);
        expect({ args, code: r.code, stdout: r.stdout, first: r.stderr.split('\n')[0]!.slice(0, message.length) }).toEqual({
          args,
          code: 2,
          stdout: '',
          first: message,
        });
        expect(r.stderr.split('\n')[1]).toBe(`(run 'weft schedules ${args[0]} --help' for usage)`);
      }
    });

    it("print the API's refusal with its problems, exit code 1", async () => {
      const r = await weft('schedules', 'create', '--workflow', 'nope', '--cron', '@daily', '--input', '{"schedule": 1}');
      expect(r).toMatchObject({ code: 1, stdout: '' });
      expect(r.stderr).toBe(
        'error: BAD_USER_INPUT: workflowId: workflow nope not found; input.schedule: is reserved: each scheduled run gets input.schedule = {id, nominalTime}\n' +
          '  - workflowId: workflow nope not found\n  - input.schedule: is reserved: each scheduled run gets input.schedule = {id, nominalTime}\n',
      );
      const unknown = await weft('schedules', 'trigger', '00000000-0000-4000-8000-000000000000');
      expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'error: NOT_FOUND: schedule 00000000-0000-4000-8000-000000000000 not found\n' });
    });
  });
});
