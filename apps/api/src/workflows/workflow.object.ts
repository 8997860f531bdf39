import { Field, Int, ObjectType } from '@nestjs/graphql';
import type { JsonValue } from '@weft/engine';
import { GraphQLDateTime } from '../common/date-time.scalar.js';
import { GraphQLJSON } from '../common/json.scalar.js';

@ObjectType('Workflow')
export class WorkflowObject {
  @Field(() => String)
  id: string;

  @Field(() => String, { nullable: true })
  name: string | null;

  @Field(() => Int, { description: 'The newest published version (versions count from 1).' })
  latestVersion: number;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  @Field(() => GraphQLDateTime)
  updatedAt: Date;
}

@ObjectType('WorkflowVersion')
export class WorkflowVersionObject {
  @Field(() => String)
  workflowId: string;

  @Field(() => Int)
  version: number;

  @Field(() => GraphQLJSON, { description: 'The parsed definition (nodes, edges, output).' })
  definition: JsonValue;

  @Field(() => String, { description: 'sha256 of the canonical JSON of the definition.' })
  checksum: string;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  @Field(() => String, { description: 'The text as published (YAML or JSON).' })
  source: string;
}
