import { Controller, Get, Header, HttpCode, Module, RequestMethod, type DynamicModule, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { ServeStaticModule } from '@nestjs/serve-static';
import { GRAPHQL_PATH } from '../graphql.options.js';
import { CONSOLE_HEADERS, CONSOLE_ROUTES, consoleDir } from './console-assets.js';
import { IdePageMiddleware, NOT_BUILT } from './ide-page.middleware.js';

/** Serves a plain answer at `/` when the console was not built, so the address says why it is empty. */
@Controller()
class ConsoleNotBuiltController {
  @Get()
  @HttpCode(404)
  @Header('Content-Type', 'text/plain; charset=utf-8')
  notBuilt(): string {
    return NOT_BUILT;
  }
}

/**
 * The web console at `/` and the GraphQL IDE at GET /graphql (for browsers), both from the
 * console's build (see {@link consoleDir}): its hashed assets under /assets, index.html for the
 * console's own routes, the security headers of {@link CONSOLE_HEADERS} on every answer.
 */
@Module({})
export class ConsoleModule implements NestModule {
  static forRoot(): DynamicModule {
    const dir = consoleDir();
    if (!dir) return { module: ConsoleModule, controllers: [ConsoleNotBuiltController] };
    return {
      module: ConsoleModule,
      imports: [
        ServeStaticModule.forRoot({
          rootPath: dir,
          renderPath: CONSOLE_ROUTES,
          serveStaticOptions: {
            index: false,
            fallthrough: true,
            // Hashed file names never change content; the pages themselves are always revalidated.
            setHeaders: (res: { setHeader(name: string, value: string): void }, path: string) => {
              for (const [name, value] of Object.entries(CONSOLE_HEADERS)) res.setHeader(name, value);
              res.setHeader('Cache-Control', path.endsWith('.html') ? 'no-cache' : 'public, max-age=31536000, immutable');
            },
          },
        }),
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(IdePageMiddleware).forRoutes({ path: GRAPHQL_PATH.slice(1), method: RequestMethod.GET });
  }
}
