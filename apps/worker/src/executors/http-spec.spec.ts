import { describe, expect, it } from '@jest/globals';
import { HTTP_SPEC_KEYS } from '@weft/engine';
import { parseSpec } from './http-spec.js';
import { watched } from '../../../../test/support/watched.js';

describe('the HTTP spec the executor reads', () => {
  it('reads no key that publishing refuses: every key it reads is one of HTTP_SPEC_KEYS', () => {
    const { spec, read } = watched({
      url: 'https://x.example/a',
      method: 'post',
      headers: { a: '1' },
      body: { n: 1 },
      timeout_seconds: 5,
      accept_status: ['2xx'],
      response: 'full',
    });
    expect(parseSpec(spec)).toMatchObject({ method: 'POST', timeoutMs: 5000, full: true, accept: [[200, 299]] });
    expect([...read].filter((k) => !HTTP_SPEC_KEYS.includes(k))).toEqual([]);
    expect([...read].sort()).toEqual([...HTTP_SPEC_KEYS].sort());
  });
});
