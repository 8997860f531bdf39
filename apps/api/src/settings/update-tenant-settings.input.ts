import { Field, InputType, Int } from '@nestjs/graphql';
import { ValidateBy, type ValidationOptions } from 'class-validator';
import { RETENTION_DAYS } from '@weft/persistence';

/** Why `value` is not a retention in days, or undefined when it is one (null and absent are). */
export function retentionDaysProblem(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value >= RETENTION_DAYS.min && value <= RETENTION_DAYS.max) return undefined;
  return `retentionDays must be an integer from ${RETENTION_DAYS.min} to ${RETENTION_DAYS.max} (days), or null to keep runs forever; got ${String(value)}`;
}

function IsRetentionDays(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRetentionDays',
      validator: {
        validate: (value: unknown) => retentionDaysProblem(value) === undefined,
        defaultMessage: (args) => retentionDaysProblem(args?.value) ?? 'invalid retentionDays',
      },
    },
    options,
  );
}

@InputType()
export class UpdateTenantSettingsInput {
  @Field(() => Int, {
    nullable: true,
    description: `Days to keep a run tree after its top-level run ended, ${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}; null keeps runs forever; absent leaves it as it is.`,
  })
  @IsRetentionDays()
  retentionDays?: number | null;
}
