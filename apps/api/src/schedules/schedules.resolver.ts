import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, ID, Info, Int, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { JsonValue } from '@weft/engine';
import { SCHEDULES_PAGE_DEFAULT, SCHEDULES_PAGE_MAX, UPCOMING_MAX } from '@weft/contract';
import type { GraphQLResolveInfo } from 'graphql';
import type { GqlContext } from '../auth/gql-context.js';
import type { Principal } from '../auth/principal.js';
import { Requires, RolesGuard } from '../auth/roles.guard.js';
import { GraphQLDateTime } from '../common/date-time.scalar.js';
import { GraphQLJSON } from '../common/json.scalar.js';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { createValidationPipe } from '../common/validation.pipe.js';
import { RunObject } from '../runs/run.object.js';
import { CreateScheduleInput, UpdateScheduleInput } from './schedule.input.js';
import { ScheduleBackfillObject, ScheduleConnection, ScheduleFireObject, ScheduleObject } from './schedule.object.js';
import { SchedulesService } from './schedules.service.js';

const validate = createValidationPipe();
const CHANGE = 'create, change or fire schedules';

@Resolver(() => ScheduleObject)
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class SchedulesResolver {
  constructor(private readonly service: SchedulesService) {}

  @Query(() => ScheduleConnection, {
    description: `The tenant's schedules in creation order, optionally of one workflow; first defaults to ${SCHEDULES_PAGE_DEFAULT} (at most ${SCHEDULES_PAGE_MAX}).`,
  })
  schedules(
    @Args('workflowId', { type: () => String, nullable: true }, validate) workflowId: string | null | undefined,
    @Args('first', { type: () => Int, nullable: true }) first: number | null | undefined,
    @Args('after', { type: () => String, nullable: true }, validate) after: string | null | undefined,
    @Context('principal') principal: Principal,
  ): Promise<ScheduleConnection> {
    return this.service.list(principal, workflowId, first, after);
  }

  @Query(() => ScheduleObject, {
    nullable: true,
    description: "A schedule of the caller's tenant; an unknown id and another tenant's schedule are a NOT_FOUND error.",
  })
  schedule(@Args('id', { type: () => ID }) id: string, @Context('principal') principal: Principal): Promise<ScheduleObject> {
    return this.service.get(principal, id);
  }

  @Query(() => ScheduleBackfillObject, { nullable: true, description: 'A backfill and its progress; NOT_FOUND for an unknown id.' })
  scheduleBackfill(@Args('id', { type: () => ID }) id: string, @Context('principal') principal: Principal): Promise<ScheduleBackfillObject> {
    return this.service.backfillById(principal, id);
  }

  @Mutation(() => ScheduleObject, {
    description: 'Creates a schedule (operator or admin). Problems name their field: cron, intervalSeconds, timeZone, endAt, workflowId, version, input.',
  })
  @Requires('operate', CHANGE)
  createSchedule(
    @Args('input', { type: () => CreateScheduleInput }, validate) input: CreateScheduleInput,
    @Context('principal') principal: Principal,
  ): Promise<ScheduleObject> {
    return this.service.create(principal, input);
  }

  @Mutation(() => ScheduleObject, {
    description: 'Changes the fields given; null clears an optional one. A change of timing computes the next fire time again from now.',
  })
  @Requires('operate', CHANGE)
  updateSchedule(
    @Args('input', { type: () => UpdateScheduleInput }, validate) input: UpdateScheduleInput,
    @Context('principal') principal: Principal,
  ): Promise<ScheduleObject> {
    return this.service.update(principal, input);
  }

  @Mutation(() => ScheduleObject, { description: 'Pauses the schedule: nothing fires (clock, buffer, backfills) until it is unpaused. A trigger still fires.' })
  @Requires('operate', CHANGE)
  pauseSchedule(
    @Args('id', { type: () => ID }) id: string,
    @Args('note', { type: () => String, nullable: true }, validate) note: string | null | undefined,
    @Context('principal') principal: Principal,
  ): Promise<ScheduleObject> {
    return this.service.setPaused(principal, id, true, note ?? null);
  }

  @Mutation(() => ScheduleObject, { description: 'Unpauses the schedule; its next fire time is computed from now, so nothing missed while paused fires.' })
  @Requires('operate', CHANGE)
  unpauseSchedule(
    @Args('id', { type: () => ID }) id: string,
    @Args('note', { type: () => String, nullable: true }, validate) note: string | null | undefined,
    @Context('principal') principal: Principal,
  ): Promise<ScheduleObject> {
    return this.service.setPaused(principal, id, false, note ?? null);
  }

  @Mutation(() => ScheduleFireObject, { description: 'Fires the schedule now (nominal time: now) under its overlap policy; its clock is not moved.' })
  @Requires('operate', CHANGE)
  triggerSchedule(@Args('id', { type: () => ID }) id: string, @Context('principal') principal: Principal): Promise<ScheduleFireObject> {
    return this.service.trigger(principal, id);
  }

  @Mutation(() => ScheduleBackfillObject, {
    description:
      'Fires each nominal time of the schedule in [from, to] (at most 10,000), oldest first, under the overlap policy (a buffering policy waits for the running run instead); progress is in scheduleBackfill and Schedule.backfills.',
  })
  @Requires('operate', CHANGE)
  backfillSchedule(
    @Args('id', { type: () => ID }) id: string,
    @Args('from', { type: () => GraphQLDateTime }) from: Date,
    @Args('to', { type: () => GraphQLDateTime }) to: Date,
    @Context('principal') principal: Principal,
  ): Promise<ScheduleBackfillObject> {
    return this.service.backfill(principal, id, from, to);
  }

  @Mutation(() => ID, { description: 'Deletes the schedule and its backfills; its runs stay and keep their scheduleId. Returns the id.' })
  @Requires('operate', CHANGE)
  deleteSchedule(@Args('id', { type: () => ID }) id: string, @Context('principal') principal: Principal): Promise<string> {
    return this.service.delete(principal, id);
  }

  @ResolveField(() => GraphQLJSON)
  input(@Parent() s: ScheduleObject, @Context() ctx: GqlContext, @Info() info: GraphQLResolveInfo): JsonValue {
    return this.service.storedValue(ctx, info, s, 'input');
  }

  @ResolveField(() => GraphQLJSON)
  config(@Parent() s: ScheduleObject, @Context() ctx: GqlContext, @Info() info: GraphQLResolveInfo): JsonValue {
    return this.service.storedValue(ctx, info, s, 'config');
  }

  @ResolveField(() => [RunObject], { description: 'The runs this schedule started, newest first.' })
  recentRuns(@Parent() s: ScheduleObject, @Args('first', { type: () => Int, defaultValue: 10 }) first: number): Promise<RunObject[]> {
    return this.service.recentRuns(s, first);
  }

  @ResolveField(() => [GraphQLDateTime], {
    description: `The next nominal fire times (at most ${UPCOMING_MAX}), from nextFireAt on; fewer when the schedule ends. While paused, the times it had before the pause (unpausing computes them again from then).`,
  })
  upcoming(@Parent() s: ScheduleObject, @Args('count', { type: () => Int, defaultValue: 5 }) count: number): Date[] {
    return this.service.upcoming(s, count);
  }

  @ResolveField(() => [ScheduleBackfillObject], { description: 'The backfills of this schedule, newest first.' })
  backfills(@Parent() s: ScheduleObject, @Args('first', { type: () => Int, defaultValue: 10 }) first: number): Promise<ScheduleBackfillObject[]> {
    return this.service.backfillsOf(s, first);
  }
}
