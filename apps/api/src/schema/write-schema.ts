/**
 * `npm run schema`: writes the API's schema (see {@link printApiSchema}) to schema.graphql at the
 * repository root, or with `--check` exits 1 when that file differs from it.
 */
import 'reflect-metadata';
import { readFile, writeFile } from 'node:fs/promises';
import { printApiSchema, SCHEMA_COMMAND, SCHEMA_FILE } from './api-schema.js';

const file = new URL(`../../../../${SCHEMA_FILE}`, import.meta.url);
const text = await printApiSchema();
if (process.argv.includes('--check')) {
  const current = await readFile(file, 'utf8').catch(() => '');
  if (current !== text) {
    console.error(`${SCHEMA_FILE} is out of date: run \`${SCHEMA_COMMAND}\``);
    process.exit(1);
  }
} else {
  await writeFile(file, text);
  console.log(`wrote ${SCHEMA_FILE}`);
}
