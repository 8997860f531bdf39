import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { asJsonb, jsonbTextBytes } from '@weft/persistence';
import { ADMIN_URL } from '../support/test-database.js';

/**
 * A change carried on a run update gives its values as a `jsonb` column gives them back (key
 * order) and with the sizes PostgreSQL computes (`octet_length(col::text)`), so that a patched
 * answer prints and charges as a fresh read does. Checked against the server (no table).
 */
let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
});
afterAll(() => client?.end());

const VALUES: unknown[] = [
  { zeta: 1, a: { y: [1, 2], b: 'x' }, bb: null, aa: true, é: 'ü', '': 0 },
  [1, 'two', { three: 3.5, four: [] }, {}],
  'a "quoted"\nline\twith \\ and \u0001',
  -12.25,
  { nested: { deeper: { deepest: ['x', { k: 'v', kk: 'vv', a: 1 }] } } },
];

describe('values as jsonb gives them back', () => {
  it.each(VALUES.map((v) => [JSON.stringify(v), v]))('%s: same key order and the same text size', async (_label, value) => {
    const r = await client.query<{ v: unknown; n: number }>('SELECT $1::jsonb AS v, octet_length($1::jsonb::text) AS n', [JSON.stringify(value)]);
    expect(JSON.stringify(asJsonb(value))).toBe(JSON.stringify(r.rows[0]!.v));
    expect(jsonbTextBytes(value)).toBe(r.rows[0]!.n);
  });
});
