export { WorkerAppModule } from './worker-app.module.js';
export { WorkerModule } from './worker.module.js';
export { DEFAULT_EAGER_DISPATCH, TASK_PROCESSOR_OPTIONS, TaskProcessor, type TaskProcessorOptions } from './processors/task.processor.js';
export { WORKER_REGISTRATION_OPTIONS, WorkerRegistration, type WorkerRegistrationOptions } from './registry/worker-registration.js';
