// @ts-check
'use strict';
/**
 * Weft's JavaScript CODE runner (CommonJS, type-checked by `npm run typecheck`).
 *
 * Usage: node runner.cjs CODE_FILE INPUT_FILE RESULT_FILE WATCHDOG_MS
 *
 * Runs the tenant's code as a classic script (a top-level `handler` function, or
 * `module.exports`) or, when that does not parse for module syntax, as an ES module (`export
 * function handler`, written as `handler.mjs` in the working directory); awaits the handler and
 * writes one JSON envelope to RESULT_FILE (see runner.py for its shape). A thread outside the main
 * one kills the process WATCHDOG_MS after it starts, should the worker that started it be gone.
 *
 * The code sees a global `NonRetryableError` class: throwing it (or any error named
 * `NonRetryableError`, or with `nonRetryable: true`) fails the task for good instead of retrying
 * it; the envelope then carries `retryable: false`.
 */
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { Worker } = require('node:worker_threads');
const { createRequire } = require('node:module');
const { pathToFileURL } = require('node:url');

const [codePath, inputPath, resultPath, watchdogMs] = process.argv.slice(2);
// A busy loop blocks the main thread; a thread outside it can still end the process. One Node
// timer holds at most 2^31-1 ms (24.8 days): a longer watchdog waits in chunks.
const watchdog =
  'const end = Date.now() + ' +
  Number(watchdogMs) +
  ';' +
  '(function wait() { const left = end - Date.now();' +
  ' if (left <= 0) process.kill(process.pid, "SIGKILL"); else setTimeout(wait, Math.min(left, 2147483647)); })();';
new Worker(watchdog, { eval: true }).unref();

// What the code prints must reach the worker before process.exit() ends the process: writes to
// the pipes block instead of queueing (the worker reads them continuously).
for (const stream of [process.stdout, process.stderr]) {
  const handle = /** @type {{ _handle?: { setBlocking?: (on: boolean) => void } }} */ (/** @type {unknown} */ (stream))._handle;
  if (handle && typeof handle.setBlocking === 'function') handle.setBlocking(true);
}

/** @param {string} text @returns {never} */
function finish(text) {
  fs.writeFileSync(resultPath, text);
  process.exit(0);
}

/**
 * @param {'no_handler' | 'syntax' | 'exception' | 'not_json'} kind @param {string} message
 * @param {boolean} [retryable] false: the attempt fails for good @returns {never}
 */
function fail(kind, message, retryable = true) {
  return finish(JSON.stringify(retryable ? { ok: false, kind, message } : { ok: false, kind, message, retryable: false }));
}

/** What a handler throws to fail for good: its node's retry policy does not apply. */
class NonRetryableError extends Error {
  /** @param {string} [message] */
  constructor(message) {
    super(message);
    this.name = 'NonRetryableError';
    this.nonRetryable = true;
  }
}
/** @type {any} */ (globalThis).NonRetryableError = NonRetryableError;

/** True for an error thrown as non-retryable: named `NonRetryableError` or flagged `nonRetryable: true`. @param {unknown} err */
function nonRetryable(err) {
  if (err === null || typeof err !== 'object') return false;
  const e = /** @type {{ name?: unknown, nonRetryable?: unknown }} */ (err);
  return e.nonRetryable === true || e.name === 'NonRetryableError';
}

/** The failure of a thrown value: retryable unless {@link nonRetryable}. @param {unknown} err @returns {never} */
function thrown(err) {
  return fail('exception', describe(err), !nonRetryable(err));
}

/** `Name: message (handler.js:L:C)` for an Error; the JSON of any other thrown value. @param {unknown} err */
function describe(err) {
  if (err === null || typeof err !== 'object' || typeof (/** @type {{message?: unknown}} */ (err).message) !== 'string') {
    let text;
    try {
      text = typeof err === 'string' ? err : JSON.stringify(err);
    } catch {
      text = String(err);
    }
    return 'Error: thrown value ' + text;
  }
  const e = /** @type {Error} */ (err);
  let text = (e.name || 'Error') + (e.message ? ': ' + e.message : '');
  const where = /handler\.m?js:\d+:\d+/.exec(String(e.stack || ''));
  if (where) text += ' (' + where[0] + ')';
  return text;
}

/** @param {Error} err @param {string} file */
function describeSyntax(err, file) {
  const line = new RegExp(file.replace('.', '\\.') + ':(\\d+)').exec(String(err.stack || ''));
  return 'SyntaxError: ' + err.message + (line ? ' (' + file + ', line ' + line[1] + ')' : '');
}

/**
 * JSON.stringify, except that NaN and ±Infinity fail (as Python's json.dumps(allow_nan=False)
 * does) instead of silently becoming null; the message names where they are.
 * @param {unknown} value
 */
function toJson(value) {
  /** @type {WeakMap<object, string>} */
  const paths = new WeakMap();
  return JSON.stringify(value, function (key, v) {
    const parent = paths.get(this);
    const at =
      parent === undefined
        ? '$'
        : Array.isArray(this)
          ? parent + '[' + key + ']'
          : /^[A-Za-z_$][\w$]*$/.test(key)
            ? parent + '.' + key
            : parent + '[' + JSON.stringify(key) + ']';
    if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(v + ' at ' + at + ' is not a JSON number');
    if (v !== null && typeof v === 'object') paths.set(v, at);
    return v;
  });
}

process.on('uncaughtException', thrown);
process.on('unhandledRejection', thrown);

/** @param {string} source @returns {Promise<unknown>} */
async function loadScript(source) {
  const script = new vm.Script(source, { filename: 'handler.js' });
  const cjsModule = { exports: /** @type {any} */ ({}) };
  const g = /** @type {any} */ (globalThis);
  g.require = createRequire(path.join(process.cwd(), 'handler.js'));
  g.module = cjsModule;
  g.exports = cjsModule.exports;
  script.runInThisContext();
  // Top-level const/let live in the global lexical scope, visible to a later script.
  const named = vm.runInThisContext('typeof handler === "function" ? handler : undefined');
  const exported = cjsModule.exports;
  return named || (typeof exported === 'function' ? exported : exported && exported.handler);
}

/** @param {string} source @returns {Promise<unknown>} */
async function loadModule(source) {
  const file = path.join(process.cwd(), 'handler.mjs');
  fs.writeFileSync(file, source);
  /** @type {any} */
  let ns;
  try {
    ns = await import(pathToFileURL(file).href);
  } catch (err) {
    // A parse error has no frame in the code itself; an error thrown while evaluating it has.
    if (err instanceof SyntaxError && !/at .*handler\.mjs:\d+:\d+/.test(String(err.stack))) {
      fail('syntax', describeSyntax(err, 'handler.mjs'));
    }
    throw err;
  }
  if (typeof ns.handler === 'function') return ns.handler;
  if (typeof ns.default === 'function') return ns.default;
  return ns.default && ns.default.handler;
}

(async () => {
  const input = JSON.parse(fs.readFileSync(inputPath, 'utf8'));
  const source = fs.readFileSync(codePath, 'utf8');
  /** @type {unknown} */
  let handler;
  try {
    let script = true;
    try {
      new vm.Script(source, { filename: 'handler.js' });
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      // Only module syntax (import, export, top-level await) sends the code down the ES module path.
      if (!/\bimport\b|'export'|\bmodules?\b/.test(err.message)) fail('syntax', describeSyntax(err, 'handler.js'));
      script = false;
    }
    handler = script ? await loadScript(source) : await loadModule(source);
  } catch (err) {
    thrown(err);
  }
  if (typeof handler !== 'function') fail('no_handler', 'code must define handler(input)');
  let result;
  try {
    result = await handler(input);
  } catch (err) {
    thrown(err);
  }
  const notJson = 'handler returned a value that is not JSON-serializable: ';
  if (typeof result === 'function' || typeof result === 'symbol') fail('not_json', notJson + 'a ' + typeof result);
  let json;
  try {
    json = result === undefined ? 'null' : toJson(result);
  } catch (err) {
    const e = /** @type {Error} */ (err);
    fail('not_json', notJson + (e instanceof RangeError ? 'nested too deeply (' + e.message + ')' : e.message));
  }
  finish('{"ok":true,"result":' + json + '}');
})();
