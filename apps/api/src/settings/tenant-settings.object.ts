import { Field, Int, ObjectType } from '@nestjs/graphql';

@ObjectType('TenantSettings', { description: "The caller's tenant's settings (admin)." })
export class TenantSettingsObject {
  @Field(() => Int, {
    nullable: true,
    description:
      'Days a run is kept after its top-level run ended (1–3,650); the scheduler then deletes the whole run tree (child runs, tasks, history, signals, attempt logs). Null: runs are kept forever (the default).',
  })
  retentionDays: number | null;
}
