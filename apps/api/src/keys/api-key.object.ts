import { Field, ID, ObjectType, OmitType, registerEnumType } from '@nestjs/graphql';
import type { Role } from '../auth/principal.js';
import { GraphQLDateTime } from '../common/date-time.scalar.js';

/** The GraphQL enum of key roles, named as the database names them (`admin`). */
export const ApiKeyRoleEnum = { admin: 'admin', operator: 'operator', viewer: 'viewer' } as const satisfies Record<Role, Role>;

registerEnumType(ApiKeyRoleEnum, {
  name: 'ApiKeyRole',
  description:
    'admin: publish definitions, manage versions and keys. operator: start, signal, cancel and retry runs. viewer: read only. Each includes the ones after it.',
});

@ObjectType('ApiKey', { description: 'An API key of the tenant, as listed: never its secret.' })
export class ApiKeyObject {
  @Field(() => ID)
  id: string;

  @Field(() => String)
  name: string;

  @Field(() => ApiKeyRoleEnum)
  role: Role;

  @Field(() => String, { description: 'The first characters of the key (`weft_` and 8 more), to recognise it.' })
  keyPrefix: string;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'Set once revoked: the key no longer authenticates.' })
  revokedAt: Date | null;
}

@ObjectType('CreatedApiKey', { description: 'A new API key with its secret, which is shown this once and never again.' })
export class CreatedApiKeyObject extends OmitType(ApiKeyObject, ['revokedAt'] as const, ObjectType) {
  @Field(() => String, { description: 'The key itself, for "Authorization: Bearer <secret>". Store it now: it cannot be read again.' })
  secret: string;
}
