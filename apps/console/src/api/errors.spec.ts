import { describe, expect, it } from '@jest/globals';
import { CombinedError } from '@urql/core';
import { errorText } from './errors.js';

describe('errorText', () => {
  it("gives the API's code and message, and each problem with where it is", () => {
    const error = new CombinedError({
      graphQLErrors: [
        {
          message: 'definition refused: 2 problems',
          extensions: {
            code: 'BAD_USER_INPUT',
            problems: [
              { path: 'nodes[1].spec.url', nodeId: 'fetch', message: 'template does not parse' },
              { path: 'edges[0].to', message: 'unknown node "shpi"' },
            ],
          },
        },
      ],
    });
    expect(errorText(error)).toBe(
      'BAD_USER_INPUT: definition refused: 2 problems\n  nodes[1].spec.url, node fetch: template does not parse\n  edges[0].to: unknown node "shpi"',
    );
  });

  it('says a problem that repeats the message once, with only where it is', () => {
    const message = "API key k1 is the tenant's last active admin key";
    const error = new CombinedError({ graphQLErrors: [{ message, extensions: { code: 'CONFLICT', problems: [{ path: 'id', message }] } }] });
    expect(errorText(error)).toBe(`CONFLICT: ${message} (at id)`);
  });

  it('names a network failure as one', () => {
    expect(errorText(new CombinedError({ networkError: new Error('Failed to fetch') }))).toBe('Network error: Failed to fetch');
  });
});
