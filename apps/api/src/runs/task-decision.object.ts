import { Field, ObjectType } from '@nestjs/graphql';

@ObjectType('EdgeCondition', { description: "One outgoing edge of a SWITCH other than its default's, as the SWITCH evaluated it." })
export class EdgeConditionObject {
  @Field(() => String, { description: "The edge's target node." })
  to: string;

  @Field(() => String, { nullable: true, description: "The edge's condition template as written; null for an edge without one (always taken)." })
  condition: string | null;

  @Field(() => Boolean, { description: "The condition's value, coerced to a boolean (true: the edge was taken)." })
  value: boolean;
}

@ObjectType('TaskDecision', {
  description:
    "What a SWITCH decided: the successors it selected, its default and whether the default was taken, and each other outgoing edge's condition with its value. " +
    'An empty branches list with defaultTaken false means no branch was taken: every successor was skipped.',
})
export class TaskDecisionObject {
  @Field(() => [String], { description: 'The selected successors, in edge order; empty when no branch was taken.' })
  branches: string[];

  @Field(() => String, { nullable: true, description: "The SWITCH's spec.default (taken when no other condition holds); null without one." })
  default: string | null;

  @Field(() => Boolean, { description: 'True when no other condition held and the default successor was taken.' })
  defaultTaken: boolean;

  @Field(() => [EdgeConditionObject], { description: "Every normal outgoing edge but the default's, in edge order, with its value." })
  conditions: EdgeConditionObject[];
}
