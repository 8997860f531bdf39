import { Module } from '@nestjs/common';
import { TaskProcessor } from './processors/task.processor.js';

/** The worker: Bull consumers for the queues in `WEFT_QUEUES`. Needs CoreModule imported beside it. */
@Module({ providers: [TaskProcessor], exports: [TaskProcessor] })
export class WorkerModule {}
