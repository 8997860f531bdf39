import { describe, expect, it } from '@jest/globals';
import { apiAnnouncement } from './api.module.js';

describe('the API start-up line', () => {
  it('says when the server listens on every interface, which the loopback URL hides', () => {
    const url = 'http://127.0.0.1:4000/graphql';
    expect(apiAnnouncement(url)).toBe('GraphQL API at http://127.0.0.1:4000/graphql (listening on every interface)');
    expect(apiAnnouncement(url, '0.0.0.0')).toBe('GraphQL API at http://127.0.0.1:4000/graphql (listening on every interface)');
    expect(apiAnnouncement(url, '::')).toBe('GraphQL API at http://127.0.0.1:4000/graphql (listening on every interface)');
    expect(apiAnnouncement(url, '127.0.0.1')).toBe('GraphQL API at http://127.0.0.1:4000/graphql');
    expect(apiAnnouncement('http://[::1]:4000/graphql', '::1')).toBe('GraphQL API at http://[::1]:4000/graphql');
  });
});
