// The API's validation thread (node:worker_threads): parses and validates large definitions
// off the event loop. Each message is a CheckRequest, each answer its CheckReply.
import { parentPort } from 'node:worker_threads';
import { runCheck, type CheckRequest } from './definition-check.js';

parentPort!.on('message', (req: CheckRequest) => parentPort!.postMessage(runCheck(req)));
