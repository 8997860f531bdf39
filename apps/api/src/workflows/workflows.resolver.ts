import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, Int, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { Principal } from '../auth/principal.js';
import { Requires, RolesGuard } from '../auth/roles.guard.js';
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

  @Mutation(() => WorkflowVersionObject, { description: 'Validates a YAML or JSON definition and stores it as the next version (admin).' })
  @Requires('administer')
  publishWorkflow(
    @Args('input', { type: () => PublishWorkflowInput }, validate) input: PublishWorkflowInput,
    @Context('principal') principal: Principal,
  ): Promise<WorkflowVersionObject> {
    return this.workflowService.publish(principal, input);
  }

  @Query(() => [WorkflowObject])
  workflows(@Context('principal') principal: Principal): Promise<WorkflowObject[]> {
    return this.workflowService.list(principal);
  }

  @Query(() => WorkflowVersionObject, {
    nullable: true,
    description: 'One version, the latest when version is omitted. An unknown workflow or version is a NOT_FOUND error.',
  })
  workflowVersion(
    @Args('workflowId', { type: () => String }, validate) workflowId: string,
    @Args('version', { type: () => Int, nullable: true }) version: number | null | undefined,
    @Context('principal') principal: Principal,
  ): Promise<WorkflowVersionObject> {
    return this.workflowService.version(principal, workflowId, version);
  }

  @ResolveField(() => String, { description: 'The DAG as a Mermaid flowchart.' })
  mermaid(@Parent() version: WorkflowVersionObject): string {
    return this.workflowService.mermaid(version);
  }
}
