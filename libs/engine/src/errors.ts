/**
 * Coded errors that cross from the engine/coordinator to the apps. The API maps `code` to
 * GraphQL `extensions.code` in one formatter; nothing else reaches clients.
 */
export type WeftErrorCode = 'BAD_USER_INPUT' | 'NOT_FOUND' | 'CONFLICT' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'TRANSIENT';

/** One problem found in user input: where (`nodeId`, `path`) and what (`message`). */
export interface Problem {
  nodeId?: string;
  path?: string;
  message: string;
}

/** An error with a client-facing code; `problems` lists every validation problem found. */
export class WeftError extends Error {
  /** `message` is the summary clients see; `problems` (default none) the details. */
  constructor(
    readonly code: WeftErrorCode,
    message: string,
    readonly problems: Problem[] = [],
  ) {
    super(message);
    this.name = 'WeftError';
  }
}
