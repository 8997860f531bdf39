import { Field, ObjectType } from '@nestjs/graphql';

@ObjectType('Problem', { description: 'One problem found in user input: where (nodeId, path) and what (message).' })
export class ProblemObject {
  @Field(() => String, { nullable: true, description: 'The node it concerns, when it concerns one.' })
  nodeId?: string | null;

  @Field(() => String, { nullable: true, description: 'Where in the input, e.g. nodes[2].spec.workflow.' })
  path?: string | null;

  @Field(() => String)
  message: string;
}
