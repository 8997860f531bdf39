// `node --import ./test/support/ts-register.mjs file.ts`: see ts-loader.mjs.
import { register } from 'node:module';

register('./ts-loader.mjs', import.meta.url);
