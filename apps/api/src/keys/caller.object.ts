import { Field, ID, ObjectType } from '@nestjs/graphql';
import type { Role } from '../auth/principal.js';
import { ApiKeyRoleEnum } from './api-key.object.js';

@ObjectType('Caller', { description: 'Who is calling: the API key the request authenticated with, and its tenant.' })
export class CallerObject {
  @Field(() => ID)
  tenantId: string;

  @Field(() => ID, { description: 'The id of the key (ApiKey.id).' })
  keyId: string;

  @Field(() => String, { description: 'The name the key was created with.' })
  keyName: string;

  @Field(() => String, { description: 'The first characters of the key (`weft_` and 8 more).' })
  keyPrefix: string;

  @Field(() => ApiKeyRoleEnum, { description: 'What the key may do; a client shows only the actions its role allows.' })
  role: Role;
}
