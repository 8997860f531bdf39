"""Weft's Python CODE runner.

Usage: python3 runner.py CODE_FILE INPUT_FILE RESULT_FILE MEMORY_MB WATCHDOG_SECONDS

Runs the tenant's code, calls ``handler(input)`` (awaiting a coroutine) and writes one JSON
envelope to RESULT_FILE, so that anything the code prints cannot corrupt the result:

- ``{"ok": true, "result": <value>}``
- ``{"ok": false, "kind": "no_handler" | "syntax" | "exception" | "not_json", "message": "..."}``,
  with ``"retryable": false`` when the code raised a non-retryable error (see ``non_retryable``)

The code sees a ``NonRetryableError`` class without importing anything: raising it (or any
exception whose class, or a base of it, is named ``NonRetryableError``, or that has a true
``non_retryable`` attribute) fails the task for good instead of retrying it.

The process limits its own address space to MEMORY_MB (the worker's cgroup bounds all the
execution's processes together) and kills itself WATCHDOG_SECONDS after it starts, should the
worker that started it be gone.
"""

import inspect
import json
import os
import signal
import sys
import traceback


def finish(result_path, text):
    """Writes the envelope and ends the process without waiting for threads the code left."""
    with open(result_path, "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def fail(result_path, kind, message, retryable=True):
    envelope = {"ok": False, "kind": kind, "message": message}
    if not retryable:
        envelope["retryable"] = False
    finish(result_path, json.dumps(envelope))


class NonRetryableError(Exception):
    """Raised by a handler: the attempt fails for good, its node's retry policy does not apply."""


def non_retryable(error):
    """True for a ``NonRetryableError`` by class name (one the code defined itself too) or flag."""
    if any(c.__name__ == "NonRetryableError" for c in type(error).__mro__):
        return True
    return getattr(error, "non_retryable", False) is True


def describe(error, name):
    """``Type: message (file, line N, in function: source)`` for the code's own innermost frame."""
    text = type(error).__name__ + (": " + str(error) if str(error) else "")
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == name]
    if frames:
        f = frames[-1]
        text += " (%s, line %d, in %s%s)" % (name, f.lineno, f.name, ": " + f.line if f.line else "")
    return text


def limit_memory(memory_bytes):
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    except (ImportError, ValueError, OSError):
        pass  # the cgroup still holds the execution


def main(argv):
    code_path, input_path, result_path = argv[1], argv[2], argv[3]
    memory_bytes, watchdog_seconds = int(argv[4]) * 1024 * 1024, int(argv[5])
    name = os.path.basename(code_path)

    signal.alarm(watchdog_seconds)
    limit_memory(memory_bytes)

    with open(input_path, encoding="utf-8") as f:
        data = json.load(f)
    with open(code_path, encoding="utf-8") as f:
        source = f.read()

    try:
        compiled = compile(source, name, "exec")
    except SyntaxError as e:
        fail(result_path, "syntax", "%s: %s (%s, line %s)" % (type(e).__name__, e.msg, name, e.lineno))

    namespace = {"__name__": "__weft_handler__", "__file__": name, "NonRetryableError": NonRetryableError}
    try:
        exec(compiled, namespace)
        handler = namespace.get("handler")
        if not callable(handler):
            fail(result_path, "no_handler", "code must define handler(input)")
        result = handler(data)
        if inspect.iscoroutine(result):
            import asyncio

            result = asyncio.run(result)
    except BaseException as e:  # noqa: BLE001 - every failure of the code is the attempt's error
        fail(result_path, "exception", describe(e, name), not non_retryable(e))

    try:
        payload = json.dumps(result, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        fail(result_path, "not_json", "handler returned a value that is not JSON-serializable: %s" % e)
    finish(result_path, '{"ok":true,"result":' + payload + "}")


if __name__ == "__main__":
    main(sys.argv)
