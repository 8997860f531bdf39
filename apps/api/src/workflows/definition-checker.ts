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
/**
 * Longest one request may hold the validation thread, in ms, counted from when it reaches the
 * head of the thread's queue (the thread answers in order). A 1 MB definition takes about 3 s
 * here; past this the thread is stopped and started again, and the request refused, so that no
 * slow path of a parser or a rule holds every tenant's large publishes.
 */
export const CHECK_DEADLINE_MS = 20_000;

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
  private readonly pending = new Map<number, { thread: Worker; resolve: (r: CheckReply) => void; reject: (e: Error) => void }>();
  /** The timer of the request at the head of the thread's queue. */
  private deadline: NodeJS.Timeout | undefined;
  /** {@link CHECK_DEADLINE_MS}; a test may shorten it. */
  deadlineMs = CHECK_DEADLINE_MS;
  /** Requests in hand per tenant (the key `''`: a caller that named none). */
  private readonly byTenant = new Map<string, number>();

  constructor(
    @Optional() @Inject(WEFT_CONFIG) config?: Partial<WeftConfig>,
    @Optional() private readonly metrics?: WeftMetrics,
  ) {
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
    // Its shape is unchecked: a text of blanks, a comment or `null` parses to null.
    const shape = parsed.definition as unknown as { nodes?: unknown } | null;
    const nodes = typeof shape === 'object' && shape !== null && Array.isArray(shape.nodes) ? shape.nodes.length : 0;
    const inline = sourceLength <= INLINE_MAX_SOURCE && nodes <= INLINE_MAX_NODES;
    this.metrics?.definitionChecks.inc({ how: inline ? 'inline' : 'thread' });
    const req: Request = { op: 'validate', definition: parsed.definition };
    return unwrap(inline ? runCheck({ id: 0, ...req }) : await this.onThread(req, tenantId)).problems!;
  }

  async onModuleDestroy(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    clearTimeout(this.deadline);
    await thread?.terminate();
  }

  private onThread(req: Request, tenantId: string): Promise<CheckReply> {
    if (this.pending.size >= MAX_THREAD_REQUESTS) {
      return Promise.reject(new BusyError(`the API is already checking ${this.pending.size} large definitions; publish again shortly`));
    }
    const held = this.byTenant.get(tenantId) ?? 0;
    if (tenantId !== '' && held >= MAX_THREAD_REQUESTS_PER_TENANT) {
      return Promise.reject(
        new BusyError(`the API is already checking ${held} large definitions of this tenant, its most at once; publish again once they are answered`),
      );
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
      this.pending.set(id, { thread, resolve, reject });
      thread.ref();
      thread.postMessage({ id, ...req });
      if (this.queueOf(thread).length === 1) this.armDeadline(thread);
    }).finally(done);
  }

  private start(): Worker {
    const thread = new Worker(THREAD.url, { execArgv: [...process.execArgv, ...THREAD.execArgv] });
    thread.unref();
    thread.on('message', (reply: CheckReply) => {
      const p = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      clearTimeout(this.deadline);
      if (this.queueOf(thread).length === 0) thread.unref();
      else this.armDeadline(thread);
      p?.resolve(reply);
    });
    const fail = (err: Error) => {
      if (this.thread !== thread) return;
      clearTimeout(this.deadline);
      this.thread = undefined;
      for (const id of this.queueOf(thread)) {
        this.pending.get(id)!.reject(err);
        this.pending.delete(id);
      }
    };
    thread.on('error', (err) => fail(new WeftError('TRANSIENT', `the definition validation thread failed: ${err.message}`)));
    thread.on('exit', (code) => fail(new WeftError('TRANSIENT', `the definition validation thread exited (code ${code})`)));
    return thread;
  }

  /** The ids of the requests `thread` has in hand, oldest (the one it is checking) first. */
  private queueOf(thread: Worker): number[] {
    return [...this.pending].filter(([, p]) => p.thread === thread).map(([id]) => id);
  }

  /**
   * Starts the deadline of the request now at the head of `thread`'s queue: past it that request
   * is refused (BAD_USER_INPUT), the requests behind it are refused as busy (TRANSIENT: publish
   * again), and the thread is stopped; the next request starts a new thread.
   */
  private armDeadline(thread: Worker): void {
    clearTimeout(this.deadline);
    const head = this.queueOf(thread)[0]!;
    this.deadline = setTimeout(() => {
      const p = this.pending.get(head);
      this.pending.delete(head);
      for (const id of this.queueOf(thread)) {
        this.pending.get(id)!.reject(new BusyError('the definition validation thread was restarted while this definition waited for it; publish again'));
        this.pending.delete(id);
      }
      if (this.thread === thread) this.thread = undefined;
      p?.reject(
        new WeftError('BAD_USER_INPUT', `the definition took over ${this.deadlineMs / 1000} s to check, the most one may take; make it smaller or simpler`, [
          { path: 'definition', message: `checking took over ${this.deadlineMs / 1000} s` },
        ]),
      );
      void thread.terminate();
    }, this.deadlineMs);
    this.deadline.unref();
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
