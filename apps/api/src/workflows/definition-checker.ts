import { Inject, Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DEFAULT_DEFINITION_LIMITS, WeftError, type DefinitionLimits, type Problem } from '@weft/engine';
import { WEFT_CONFIG, WeftMetrics, type WeftConfig } from '@weft/platform';
import { runCheck, type CheckReply, type CheckRequest, type ParsedDefinition } from './definition-check.js';
import { BusyError } from '../common/busy.error.js';

/**
 * Text up to this many UTF-16 units is parsed on the API's thread, and definitions up to
 * {@link INLINE_MAX_NODES} nodes are validated there: about 30 ms of work at most. Anything
 * larger goes to the validation thread, so one tenant's large definition (up to a second of
 * parsing for 1 MB of YAML) does not hold up every other request of the process.
 */
export const INLINE_MAX_SOURCE = 64 * 1024;
/** See {@link INLINE_MAX_SOURCE}. */
export const INLINE_MAX_NODES = 200;
/** Requests the validation thread may have in hand (running and waiting); more are refused as TRANSIENT. */
export const MAX_THREAD_REQUESTS = 8;
/**
 * Of {@link MAX_THREAD_REQUESTS}, the most one tenant may have in hand: a tenant publishing large
 * definitions in a loop leaves the rest to the others.
 */
export const MAX_THREAD_REQUESTS_PER_TENANT = 2;

type Request = CheckRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

/**
 * Parses and validates definitions for publishing: small ones inline, large ones on one
 * validation thread (node:worker_threads) that runs the engine's same functions, started on first
 * use and restarted after it dies. Its requests are bounded ({@link MAX_THREAD_REQUESTS}).
 */
@Injectable()
export class DefinitionChecker implements OnModuleDestroy {
  private readonly limits: DefinitionLimits;
  private thread: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: CheckReply) => void; reject: (e: Error) => void }>();
  /** Requests in hand per tenant (the key `''`: a caller that named none). */
  private readonly byTenant = new Map<string, number>();

  constructor(@Optional() @Inject(WEFT_CONFIG) config?: Partial<WeftConfig>, @Optional() private readonly metrics?: WeftMetrics) {
    this.limits = {
      maxNodes: config?.maxDefinitionNodes ?? DEFAULT_DEFINITION_LIMITS.maxNodes,
      maxEdges: config?.maxDefinitionEdges ?? DEFAULT_DEFINITION_LIMITS.maxEdges,
    };
  }

  /**
   * Parses `source` and refuses it over the node and edge limits (WeftError BAD_USER_INPUT),
   * on the validation thread when the text is large, counted under `tenantId`.
   */
  async parse(source: string, tenantId = ''): Promise<ParsedDefinition> {
    const req: Request = { op: 'parse', source, limits: this.limits };
    const reply = source.length <= INLINE_MAX_SOURCE ? runCheck({ id: 0, ...req }) : await this.onThread(req, tenantId);
    return unwrap(reply).parsed!;
  }

  /**
   * Every problem of `parsed` (none when valid), on the validation thread when its text was
   * large or it has many nodes (counted there under `tenantId`). Counted in
   * `weft_definition_checks_total` by where it ran.
   */
  async validate(parsed: ParsedDefinition, sourceLength: number, tenantId = ''): Promise<Problem[]> {
    const nodes = Array.isArray(parsed.definition.nodes) ? parsed.definition.nodes.length : 0;
    const inline = sourceLength <= INLINE_MAX_SOURCE && nodes <= INLINE_MAX_NODES;
    this.metrics?.definitionChecks.inc({ how: inline ? 'inline' : 'thread' });
    const req: Request = { op: 'validate', definition: parsed.definition };
    return unwrap(inline ? runCheck({ id: 0, ...req }) : await this.onThread(req, tenantId)).problems!;
  }

  async onModuleDestroy(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    await thread?.terminate();
  }

  private onThread(req: Request, tenantId: string): Promise<CheckReply> {
    if (this.pending.size >= MAX_THREAD_REQUESTS) {
      return Promise.reject(new BusyError(`the API is already checking ${this.pending.size} large definitions; publish again shortly`));
    }
    const held = this.byTenant.get(tenantId) ?? 0;
    if (tenantId !== '' && held >= MAX_THREAD_REQUESTS_PER_TENANT) {
      return Promise.reject(new BusyError(`the API is already checking ${held} large definitions of this tenant, its most at once; publish again once they are answered`));
    }
    const thread = (this.thread ??= this.start());
    const id = this.nextId++;
    this.byTenant.set(tenantId, held + 1);
    const done = (): void => {
      const left = (this.byTenant.get(tenantId) ?? 1) - 1;
      if (left > 0) this.byTenant.set(tenantId, left);
      else this.byTenant.delete(tenantId);
    };
    return new Promise<CheckReply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      thread.ref();
      thread.postMessage({ id, ...req });
    }).finally(done);
  }

  private start(): Worker {
    const thread = new Worker(THREAD.url, { execArgv: [...process.execArgv, ...THREAD.execArgv] });
    thread.unref();
    thread.on('message', (reply: CheckReply) => {
      const p = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) thread.unref();
      p?.resolve(reply);
    });
    const fail = (err: Error) => {
      if (this.thread === thread) this.thread = undefined;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    thread.on('error', (err) => fail(new WeftError('TRANSIENT', `the definition validation thread failed: ${err.message}`)));
    thread.on('exit', (code) => fail(new WeftError('TRANSIENT', `the definition validation thread exited (code ${code})`)));
    return thread;
  }
}

function unwrap(reply: CheckReply): Extract<CheckReply, { ok: true }> {
  if (reply.ok) return reply;
  if (reply.code === 'INTERNAL') throw new Error(`definition check failed: ${reply.message}`);
  throw new WeftError(reply.code, reply.message, reply.problems);
}

/**
 * The thread's script: the compiled `.js` beside this file, or, when this file runs from its
 * TypeScript source (the test suites), the `.ts` source loaded through the repository's
 * TypeScript hooks (test/support/ts-register.mjs), as the suites' child processes are.
 */
const THREAD = import.meta.url.endsWith('.ts')
  ? {
      url: new URL('./definition-check.thread.ts', import.meta.url),
      execArgv: ['--import', fileURLToPath(new URL('../../../../test/support/ts-register.mjs', import.meta.url))],
    }
  : { url: new URL('./definition-check.thread.js', import.meta.url), execArgv: [] as string[] };
