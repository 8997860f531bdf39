import { beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { printApiSchema, SCHEMA_COMMAND, SCHEMA_FILE } from './api-schema.js';

const ROOT = new URL('../../../../', import.meta.url);

/** A message naming the command to run when `checkedIn` is not `generated`, else undefined. */
function drift(file: string, checkedIn: string, generated: string): string | undefined {
  if (checkedIn === generated) return undefined;
  const a = checkedIn.split('\n');
  const b = generated.split('\n');
  const line = a.findIndex((l, i) => l !== b[i]);
  const at = line < 0 ? b.length : line + 1;
  return `${file} is out of date (first difference at line ${at}: ${JSON.stringify(b[at - 1] ?? '')}): run \`${SCHEMA_COMMAND}\` and commit the result`;
}

describe('the checked-in GraphQL schema', () => {
  let printed: string;
  beforeAll(async () => {
    printed = await printApiSchema();
  });

  it(`is what the resolvers print (${SCHEMA_FILE})`, () => {
    const checkedIn = readFileSync(new URL(SCHEMA_FILE, ROOT), 'utf8');
    expect(drift(SCHEMA_FILE, checkedIn, printed)).toBeUndefined();
  });

  it('names the command when a field is missing from the file', () => {
    const stale = printed.replace('\n  whoami: Caller!\n', '\n');
    expect(stale).not.toBe(printed);
    expect(drift(SCHEMA_FILE, stale, printed)).toContain(`run \`${SCHEMA_COMMAND}\``);
  });
});
