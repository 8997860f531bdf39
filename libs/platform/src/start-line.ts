import type { Logger } from '@nestjs/common';
import type { WeftConfig } from './weft-config.js';

/** Logs a role's start line: at info, or at debug where the process prints its own summary (`config.quietStart`). */
export function logStartLine(log: Logger, config: Pick<WeftConfig, 'quietStart'>, message: string): void {
  if (config.quietStart) log.debug(message);
  else log.log(message);
}
