import { Field, InputType } from '@nestjs/graphql';
import { IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

@InputType()
export class PublishWorkflowInput {
  @Field(() => String)
  @IsString()
  @Matches(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, {
    message: 'workflowId must start with a letter or digit and contain only letters, digits, "_", ".", ":" and "-"',
  })
  @MaxLength(128)
  workflowId: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string | null;

  @Field(() => String, { description: 'The definition as YAML or JSON text.' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(1_000_000)
  definition: string;
}
