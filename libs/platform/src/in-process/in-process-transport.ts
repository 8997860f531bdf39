import { PubSub, type PubSubEngine } from 'graphql-subscriptions';
import { InProcessRunUpdatePublisher, InProcessRunWatches } from './in-process-run-updates.js';
import { InProcessTaskQueues } from './in-process-task-queues.js';

/**
 * The in-process transport of `weft dev` without Redis, as one object CoreModule provides (only
 * when `WeftConfig.transport` is `in-process`) and the apps' modules read when present: the task
 * queues, the run-update PubSub the API subscribes to, the watch registry and the publisher over
 * them. It serves one process: see docs/ARCHITECTURE.md, "The in-process transport".
 */
export class InProcessTransport {
  readonly queues: InProcessTaskQueues;
  readonly pubsub: PubSubEngine = new PubSub();
  readonly watches = new InProcessRunWatches();
  readonly publisher = new InProcessRunUpdatePublisher(this.pubsub, this.watches);

  constructor(onError?: (message: string) => void) {
    this.queues = new InProcessTaskQueues(onError);
  }
}
