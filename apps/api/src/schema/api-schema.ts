import { Logger, type Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants.js';
import { NestFactory } from '@nestjs/core';
import { GraphQLSchemaBuilderModule, GraphQLSchemaFactory } from '@nestjs/graphql';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { ApiModule } from '../api.module.js';

/** The file at the repository root that holds {@link printApiSchema}'s text. */
export const SCHEMA_FILE = 'schema.graphql';

/** The command that rewrites {@link SCHEMA_FILE}. */
export const SCHEMA_COMMAND = 'npm run schema';

const HEADER = `# The GraphQL schema of Weft's API, printed from the resolvers by \`npm run schema\`.
# Do not edit: change the resolvers and run the command again. A test fails while they differ.

`;

/**
 * The API's schema in SDL, sorted by name as the server sorts it (`sortSchema`), with a header
 * and a final newline: what {@link SCHEMA_FILE} holds. Built from the resolvers that
 * {@link ApiModule} provides, by @nestjs/graphql's schema factory alone: no server, no database,
 * no Redis. Rejects when the resolvers do not make a valid schema.
 */
export async function printApiSchema(): Promise<string> {
  const app = await NestFactory.create(GraphQLSchemaBuilderModule, { logger: false });
  try {
    await app.init();
    const schema = await app.get(GraphQLSchemaFactory).create(apiResolvers());
    return HEADER + printSchema(lexicographicSortSchema(schema)) + '\n';
  } finally {
    await app.close();
  }
}

/** The resolver classes among ApiModule's providers (those `@Resolver()` marked). */
function apiResolvers(): Type[] {
  const providers: unknown[] = Reflect.getMetadata(MODULE_METADATA.PROVIDERS, ApiModule) ?? [];
  const resolvers = providers.filter((p): p is Type => typeof p === 'function' && Reflect.hasOwnMetadata('graphql:resolver_type', p));
  if (resolvers.length === 0) new Logger('ApiSchema').warn('ApiModule provides no resolver');
  return resolvers;
}
