import { describe, expect, it } from '@jest/globals';
import type { CliConfig } from './cli-config.js';
import { normalizeApiKey, normalizeUrl, resolveConnection } from './connection.js';

const CONFIG: CliConfig = {
  current_context: 'staging',
  contexts: {
    staging: { url: 'https://staging.example.com/graphql', api_key: 'weft_context_key' },
    prod: { url: 'https://prod.example.com/graphql', api_key: 'weft_prod_key' },
  },
};

describe('which URL and key a client command uses', () => {
  it('takes the flag over the environment, the environment over the context, the context over the default', () => {
    const env = { WEFT_URL: 'https://env.example.com/graphql', WEFT_API_KEY: 'weft_env_key' };
    expect(resolveConnection({ url: 'https://flag.example.com/graphql', apiKey: 'weft_flag_key' }, env, CONFIG)).toMatchObject({
      url: 'https://flag.example.com/graphql',
      apiKey: 'weft_flag_key',
      urlSource: '--url',
      keySource: '--api-key',
    });
    expect(resolveConnection({}, env, CONFIG)).toMatchObject({ url: 'https://env.example.com/graphql', apiKey: 'weft_env_key', keySource: 'WEFT_API_KEY' });
    expect(resolveConnection({}, {}, CONFIG)).toMatchObject({
      url: 'https://staging.example.com/graphql',
      apiKey: 'weft_context_key',
      keySource: 'context staging',
    });
    expect(resolveConnection({}, { WEFT_API_KEY: 'k' }, { contexts: {} })).toMatchObject({
      url: 'http://127.0.0.1:4000/graphql',
      urlSource: 'the default URL',
    });
  });

  it('decides the URL and the key each on its own', () => {
    expect(resolveConnection({ apiKey: 'weft_flag_key' }, {}, CONFIG)).toMatchObject({ url: 'https://staging.example.com/graphql', apiKey: 'weft_flag_key' });
    expect(resolveConnection({}, { WEFT_URL: 'https://env.example.com/graphql' }, CONFIG)).toMatchObject({
      url: 'https://env.example.com/graphql',
      apiKey: 'weft_context_key',
    });
  });

  it('counts empty values as unset', () => {
    expect(resolveConnection({ url: '', apiKey: ' ' }, { WEFT_URL: '', WEFT_API_KEY: '' }, CONFIG)).toMatchObject({
      apiKey: 'weft_context_key',
      keySource: 'context staging',
    });
  });

  it('says how to give a key when none is given', () => {
    expect(() => resolveConnection({}, {}, { contexts: {} })).toThrow(/no API key: pass --api-key, set WEFT_API_KEY, or save one with `weft context add/);
  });

  it('refuses a current context the file does not hold, only when it would be used', () => {
    const dangling: CliConfig = { current_context: 'gone', contexts: {} };
    expect(() => resolveConnection({}, { WEFT_API_KEY: 'k' }, dangling)).toThrow('the current context "gone" is not in the config file');
    expect(resolveConnection({ url: 'http://h/graphql' }, { WEFT_API_KEY: 'k' }, dangling).url).toBe('http://h/graphql');
  });

  it('corrects a URL without the API path and a key given as "Bearer …", saying so', () => {
    const c = resolveConnection({ url: ' http://127.0.0.1:4000 ', apiKey: 'Bearer weft_abc' }, {}, { contexts: {} });
    expect(c).toMatchObject({ url: 'http://127.0.0.1:4000/graphql', apiKey: 'weft_abc' });
    expect(c.notes).toEqual([
      "--url http://127.0.0.1:4000 has no path: using http://127.0.0.1:4000/graphql, the API's endpoint",
      '--api-key starts with "Bearer": using the key without it (the client sends "Bearer" itself)',
    ]);
    expect(resolveConnection({}, { WEFT_URL: 'http://h/graphql', WEFT_API_KEY: 'k' }, { contexts: {} }).notes).toEqual([]);
  });
});

describe('normalizeUrl', () => {
  it('adds /graphql to a root URL, with or without its slash, and keeps any other path', () => {
    expect(normalizeUrl('http://127.0.0.1:4000/', 'WEFT_URL').url).toBe('http://127.0.0.1:4000/graphql');
    expect(normalizeUrl('https://weft.example.com', 'WEFT_URL').url).toBe('https://weft.example.com/graphql');
    expect(normalizeUrl('https://proxy.example.com/weft/graphql', 'WEFT_URL')).toEqual({ url: 'https://proxy.example.com/weft/graphql' });
    expect(normalizeUrl('https://proxy.example.com/weft', 'WEFT_URL')).toEqual({ url: 'https://proxy.example.com/weft' });
  });

  it('refuses what is not an http(s) URL, naming where it came from', () => {
    expect(() => normalizeUrl('localhost:4000', 'WEFT_URL')).toThrow(/^WEFT_URL "localhost:4000" must be an http:\/\/ or https:\/\/ URL/);
    expect(() => normalizeUrl('127.0.0.1:4000', 'WEFT_URL')).toThrow(
      /^WEFT_URL "127.0.0.1:4000" is not a URL: give the API's endpoint, e.g. http:\/\/127.0.0.1:4000\/graphql/,
    );
    expect(() => normalizeUrl('ws://h/graphql', '--url')).toThrow(/^--url "ws:\/\/h\/graphql" must be an http/);
    expect(() => normalizeUrl('not a url', 'context prod')).toThrow(/^context prod "not a url" is not a URL/);
  });
});

describe('normalizeApiKey', () => {
  it('removes "Bearer" in any case, and a whole Authorization header', () => {
    expect(normalizeApiKey('bearer   weft_x', '--api-key').apiKey).toBe('weft_x');
    expect(normalizeApiKey('Authorization: Bearer weft_x', '--api-key').apiKey).toBe('weft_x');
    expect(normalizeApiKey(' weft_x\n', '--api-key')).toEqual({ apiKey: 'weft_x' });
  });
});
