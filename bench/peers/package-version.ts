/** The installed version of a package of bench/peers/node_modules, whatever its `exports` allow. */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The `version` of package `name` as installed for the peers' drivers.
 * @throws Error naming the package when it cannot be found
 */
export function packageVersion(name: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name && pkg.version) return pkg.version;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json of ${name} above its entry point`);
    dir = up;
  }
}
