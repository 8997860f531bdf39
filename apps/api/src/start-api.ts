import { Module, type DynamicModule, type INestApplication, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ApiModule, listenApi } from './api.module.js';

/** Options of {@link startApi}. */
export interface StartApiOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** Modules booted beside ApiModule; must provide what it needs (CoreModule.forRoot(config), or stand-ins). */
  moduleImports: NonNullable<DynamicModule['imports']>;
  logger?: LogLevel[] | false;
}

/** A running API: its GraphQL URL and how to stop it. */
export interface RunningApi {
  app: INestApplication;
  url: string;
  close(): Promise<void>;
}

/** Boots the API alone in one Nest application over `moduleImports` (suites that replace what CoreModule provides). */
export async function startApi(opts: StartApiOptions): Promise<RunningApi> {
  @Module({ imports: [...opts.moduleImports, ApiModule] })
  class ApiRootModule {}

  const app = await NestFactory.create(ApiRootModule, opts.logger === undefined ? {} : { logger: opts.logger });
  try {
    const url = await listenApi(app, opts.port, opts.host);
    return { app, url, close: () => app.close() };
  } catch (err) {
    await app.close();
    throw err;
  }
}
