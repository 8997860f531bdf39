import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, Info, Int, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import type { JsonValue, Problem } from '@weft/engine';
import type { GqlContext } from '../auth/gql-context.js';
import type { Principal } from '../auth/principal.js';
import { Requires, RolesGuard } from '../auth/roles.guard.js';
import { GraphObject } from '../common/graph.object.js';
import type { DagShape } from '../common/graph.js';
import { GraphQLJSON } from '../common/json.scalar.js';
import { ProblemObject } from '../common/problem.object.js';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { createValidationPipe } from '../common/validation.pipe.js';
import { PublishWorkflowInput } from './publish-workflow.input.js';
import { WorkflowObject, WorkflowVersionObject } from './workflow.object.js';
import { WorkflowsService } from './workflows.service.js';

const validate = createValidationPipe();

@Resolver(() => WorkflowVersionObject)
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class WorkflowsResolver {
  constructor(private readonly workflowService: WorkflowsService) {}

  @Mutation(() => WorkflowVersionObject, {
    description:
      'Validates a YAML or JSON definition and stores it as the next version (admin). A definition identical to the latest version returns that version instead. Problems that do not refuse it (a SUBWORKFLOW calling a workflow the tenant does not have, an HTTP or CODE node on a queue no live worker serves) come back in warnings.',
  })
  @Requires('administer', 'publish workflow definitions')
  publishWorkflow(
    @Args('input', { type: () => PublishWorkflowInput }, validate) input: PublishWorkflowInput,
    @Context('principal') principal: Principal,
  ): Promise<WorkflowVersionObject> {
    return this.workflowService.publish(principal, input);
  }

  @Mutation(() => WorkflowVersionObject, {
    description:
      'Deprecates a version (admin): new runs on it are refused, running runs continue. deprecated: false restores it. An unknown workflow or version is a NOT_FOUND error.',
  })
  @Requires('administer', 'manage workflow versions')
  deprecateVersion(
    @Args('workflowId', { type: () => String }, validate) workflowId: string,
    @Args('version', { type: () => Int }) version: number,
    @Args('deprecated', { type: () => Boolean, defaultValue: true }) deprecated: boolean,
    @Context('principal') principal: Principal,
  ): Promise<WorkflowVersionObject> {
    return this.workflowService.deprecateVersion(principal, workflowId, version, deprecated);
  }

  @Query(() => [WorkflowObject])
  workflows(@Context('principal') principal: Principal, @Context() ctx: GqlContext, @Info() info: GraphQLResolveInfo): Promise<WorkflowObject[]> {
    return this.workflowService.sizing(ctx, info, this.workflowService.list(principal));
  }

  @Query(() => WorkflowVersionObject, {
    nullable: true,
    description: 'One version, the latest when version is omitted. An unknown workflow or version is a NOT_FOUND error.',
  })
  workflowVersion(
    @Args('workflowId', { type: () => String }, validate) workflowId: string,
    @Args('version', { type: () => Int, nullable: true }) version: number | null | undefined,
    @Context('principal') principal: Principal,
    @Context() ctx: GqlContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<WorkflowVersionObject> {
    return this.workflowService.sizing(ctx, info, this.workflowService.version(principal, workflowId, version));
  }

  @ResolveField(() => GraphQLJSON)
  definition(@Parent() version: WorkflowVersionObject, @Context() ctx: GqlContext, @Info() info: GraphQLResolveInfo): Promise<JsonValue> {
    return this.workflowService.chargedDefinition(ctx, info, version);
  }

  @ResolveField(() => String)
  source(@Parent() version: WorkflowVersionObject, @Context() ctx: GqlContext, @Info() info: GraphQLResolveInfo): Promise<string> {
    return this.workflowService.chargedSource(ctx, info, version);
  }

  @ResolveField(() => [ProblemObject], {
    description:
      'What does not refuse this version but fails its runs when they get there, as of now: each SUBWORKFLOW node calling a workflow the tenant does not have (or a version it does not have, or a deprecated version). publishWorkflow returns those of the version it published.',
  })
  warnings(@Parent() version: WorkflowVersionObject): Promise<Problem[]> {
    return this.workflowService.warnings(version);
  }

  @ResolveField(() => String, { description: 'The DAG as a Mermaid flowchart.' })
  mermaid(@Parent() version: WorkflowVersionObject): Promise<string> {
    return this.workflowService.mermaid(version);
  }

  @ResolveField(() => GraphObject, {
    description: 'The DAG as data, in definition order (every node unreached, every edge OPEN), for drawings that lay it out themselves.',
  })
  graph(@Parent() version: WorkflowVersionObject): Promise<DagShape> {
    return this.workflowService.graph(version);
  }
}

@Resolver(() => WorkflowObject)
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class WorkflowResolver {
  constructor(private readonly workflowService: WorkflowsService) {}

  @Query(() => WorkflowObject, { nullable: true, description: 'One workflow with its versions. An unknown workflow is a NOT_FOUND error (never null).' })
  workflow(
    @Args('workflowId', { type: () => String }, validate) workflowId: string,
    @Context('principal') principal: Principal,
    @Context() ctx: GqlContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<WorkflowObject> {
    return this.workflowService.sizing(ctx, info, this.workflowService.workflow(principal, workflowId));
  }

  @Mutation(() => WorkflowObject, {
    description:
      'Pins the version startRun uses when none is given (admin); version null unpins it (the default follows the latest again). An unknown workflow or version is NOT_FOUND; a deprecated version is BAD_USER_INPUT.',
  })
  @Requires('administer', 'manage workflow versions')
  setDefaultVersion(
    @Args('workflowId', { type: () => String }, validate) workflowId: string,
    @Args('version', { type: () => Int, nullable: true }) version: number | null | undefined,
    @Context('principal') principal: Principal,
  ): Promise<WorkflowObject> {
    return this.workflowService.setDefaultVersion(principal, workflowId, version ?? null);
  }

  @ResolveField(() => [WorkflowVersionObject], { description: 'Every version, oldest first.' })
  versions(@Parent() workflow: WorkflowObject, @Context() ctx: GqlContext, @Info() info: GraphQLResolveInfo): Promise<WorkflowVersionObject[]> {
    return this.workflowService.sizing(ctx, info, this.workflowService.versions(workflow));
  }
}
