import { Module } from '@nestjs/common';
import { TaskProcessor } from './processors/task.processor.js';
import { WorkerRegistration } from './registry/worker-registration.js';

/**
 * The worker: Bull consumers for the queues in `WEFT_QUEUES`, and this process's row in the
 * worker registry. Needs CoreModule imported beside it.
 */
@Module({ providers: [TaskProcessor, WorkerRegistration], exports: [TaskProcessor, WorkerRegistration] })
export class WorkerModule {}
