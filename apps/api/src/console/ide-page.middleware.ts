import { Injectable, type NestMiddleware } from '@nestjs/common';
import { join } from 'node:path';
import { CONSOLE_HEADERS, consoleDir } from './console-assets.js';

/**
 * GET /graphql from a browser (Accept: text/html, no `query` parameter) gets the GraphQL IDE
 * page from the console's build, which loads nothing from outside this server. Every other
 * request (POST, GET with a query, the graphql-ws upgrade) goes on to the API. Without a build
 * the browser is told how to make one.
 */
/** The parts of Express's request and response the middleware uses. */
interface IdeRequest {
  method: string;
  query: Record<string, unknown>;
  accepts(types: string[]): string | false;
}
interface IdeResponse {
  set(headers: Readonly<Record<string, string>>): unknown;
  status(code: number): IdeResponse;
  type(type: string): IdeResponse;
  send(body: string): unknown;
  sendFile(path: string): unknown;
}

@Injectable()
export class IdePageMiddleware implements NestMiddleware {
  private readonly dir = consoleDir();

  use(req: IdeRequest, res: IdeResponse, next: () => void): void {
    if (req.method !== 'GET' || req.query.query !== undefined || req.accepts(['application/json', 'text/html']) !== 'text/html') {
      next();
      return;
    }
    res.set(CONSOLE_HEADERS);
    if (!this.dir) {
      res.status(404).type('text/plain').send(NOT_BUILT);
      return;
    }
    res.sendFile(join(this.dir, 'ide.html'));
  }
}

export const NOT_BUILT = 'The Weft console is not built here: run `npm run build` (it writes dist/console), or set WEFT_CONSOLE_DIR.\n';
