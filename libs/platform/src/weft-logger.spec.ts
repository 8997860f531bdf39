import { describe, expect, it } from '@jest/globals';
import { WeftLogger } from './weft-logger.js';

function capture(level: 'info' | 'debug'): { logger: WeftLogger; records: () => { level: string; context?: string; msg: string }[] } {
  const lines: string[] = [];
  const logger = new WeftLogger(level, { write: (l: string) => void lines.push(l) });
  return { logger, records: () => lines.map((l) => JSON.parse(l)) };
}

describe('WeftLogger and Nest’s start-up narration', () => {
  it('writes Nest’s module and route lines at debug, so an info log shows only Weft’s own', () => {
    const { logger, records } = capture('info');
    logger.log('Starting Nest application...', 'NestFactory');
    logger.log('ApiModule dependencies initialized', 'InstanceLoader');
    logger.log('LivenessController {/}:', 'RoutesResolver');
    logger.log('Mapped {/healthz, GET} route', 'RouterExplorer');
    logger.log('Mapped {/graphql, POST} route', 'GraphQLModule');
    logger.log('Nest application successfully started', 'NestApplication');
    logger.log('consuming queues http, python, js', 'worker');
    expect(records()).toEqual([expect.objectContaining({ level: 'info', context: 'worker', msg: 'consuming queues http, python, js' })]);
  });

  it('still writes them at debug, and never lowers a framework warning or error', () => {
    const { logger, records } = capture('debug');
    logger.log('ApiModule dependencies initialized', 'InstanceLoader');
    logger.warn('something odd', 'NestApplication');
    logger.error('cannot start', 'NestFactory');
    expect(records().map((r) => [r.level, r.context])).toEqual([
      ['debug', 'InstanceLoader'],
      ['warn', 'NestApplication'],
      ['error', 'NestFactory'],
    ]);
  });
});
