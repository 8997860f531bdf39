import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The Dockerfile read instruction by instruction, checked without a container engine against
 * what the repository builds and runs: a build stage with every dependency that compiles, a
 * runtime stage on Node 20.20 bookworm-slim (an argument, to pin by digest) with production dependencies only, python3 and
 * bubblewrap for CODE, a non-root user, and an entry point that is the package's `weft` bin. The
 * runtime stage copies dist/apps and dist/libs only, so no source file there may import a file
 * outside apps/ and libs/. .dockerignore must keep what the build needs.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

interface Instruction {
  op: string;
  args: string;
}

/** The Dockerfile's instructions: comments and blank lines dropped, continuation lines joined. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw) || (!pending && !raw.trim())) continue;
    pending += raw.replace(/\\\s*$/, ' ');
    if (/\\\s*$/.test(raw)) continue;
    const m = /^\s*(\w+)\s+([\s\S]*)$/.exec(pending)!;
    out.push({ op: m[1]!.toUpperCase(), args: m[2]!.replace(/\s+/g, ' ').trim() });
    pending = '';
  }
  return out;
}

/** Instructions per stage, by stage name (`FROM … AS name`). */
function stages(list: Instruction[]): Map<string, Instruction[]> {
  const out = new Map<string, Instruction[]>();
  let current: Instruction[] | undefined;
  for (const i of list) {
    if (i.op === 'FROM') out.set(/ AS (\w+)$/i.exec(i.args)![1]!, (current = [i]));
    else current?.push(i);
  }
  return out;
}

const all = instructions(read('Dockerfile'));
const byStage = stages(all);
const pkg = JSON.parse(read('package.json')) as { bin: Record<string, string>; scripts: Record<string, string> };

describe('the Dockerfile', () => {
  it('has a build stage and a runtime stage, both FROM the NODE_IMAGE argument: node 20.20 bookworm-slim, pinnable by digest', () => {
    expect(all[0]!.op).toBe('ARG');
    // The default is the tag, or the tag pinned by its digest.
    expect(all[0]!.args).toMatch(/^NODE_IMAGE=node:20\.20-bookworm-slim(@sha256:[0-9a-f]{64})?$/);
    expect([...byStage.keys()]).toEqual(['build', 'runtime']);
    expect(all.filter((i) => i.op === 'FROM').map((i) => i.args)).toEqual(['${NODE_IMAGE} AS build', '${NODE_IMAGE} AS runtime']);
    // How to pin it, next to it.
    expect(read('Dockerfile')).toContain('docker buildx imagetools inspect node:20.20-bookworm-slim');
    expect(read('Dockerfile')).toContain('--build-arg NODE_IMAGE=node:20.20-bookworm-slim@sha256:<digest>');
  });

  it('builds with every dependency: npm ci, then npm run build over the sources', () => {
    expect(byStage.get('build')!.slice(1)).toEqual([
      { op: 'WORKDIR', args: '/app' },
      { op: 'COPY', args: 'package.json package-lock.json ./' },
      { op: 'RUN', args: 'npm ci' },
      { op: 'COPY', args: '. .' },
      { op: 'RUN', args: 'npm run build' },
    ]);
    // The build writes the compiled apps, libraries and the CODE runners under dist/apps and dist/libs.
    expect(pkg.scripts.build).toMatch(
      /^tsc -p tsconfig\.build\.json && tsc-alias -p tsconfig\.build\.json && .* dist\/apps\/worker\/src\/executors\/code\/runners\/ && npm run build:console --silent$/,
    );
    expect((JSON.parse(read('tsconfig.json')) as { compilerOptions: { outDir: string; rootDir: string } }).compilerOptions).toMatchObject({
      outDir: 'dist',
      rootDir: '.',
    });
  });

  it('runs on production dependencies with python3 and bubblewrap, as a user that is not root', () => {
    const runtime = byStage.get('runtime')!;
    const run = runtime.filter((i) => i.op === 'RUN').map((i) => i.args);
    expect(run[0]).toContain('apt-get install -y --no-install-recommends python3 bubblewrap');
    expect(run[0]).toContain('useradd --system --uid 10001 --gid weft');
    expect(run[1]).toBe('npm ci --omit=dev && npm cache clean --force');
    expect(runtime.filter((i) => i.op === 'COPY').map((i) => i.args)).toEqual([
      'package.json package-lock.json ./',
      '--from=build /app/dist/apps ./dist/apps',
      '--from=build /app/dist/libs ./dist/libs',
      '--from=build /app/dist/console ./dist/console',
    ]);
    expect(runtime.find((i) => i.op === 'USER')).toEqual({ op: 'USER', args: 'weft' });
    // The ops listener on every interface of the container (loopback is the default outside one).
    expect(runtime.find((i) => i.op === 'ENV')).toEqual({ op: 'ENV', args: 'NODE_ENV=production WEFT_METRICS_HOST=0.0.0.0' });
  });

  it('enters through the package’s weft bin, exposes the API and health ports, and runs weft dev by default', () => {
    const last = byStage.get('runtime')!.slice(-3);
    expect(last).toEqual([
      { op: 'EXPOSE', args: '4000 9464' },
      { op: 'ENTRYPOINT', args: '["node", "dist/apps/cli/src/main.js"]' },
      { op: 'CMD', args: '["dev", "--host", "0.0.0.0"]' },
    ]);
    expect(JSON.parse(last[1]!.args)[1]).toBe(pkg.bin.weft);
    expect(statSync(join(ROOT, 'apps/cli/src/main.ts')).isFile()).toBe(true);
  });

  it('copies everything the runtime imports: apps and libs import nothing outside apps/ and libs/', () => {
    const outside: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(join(ROOT, dir))) {
        const path = join(dir, name);
        if (statSync(join(ROOT, path)).isDirectory()) walk(path);
        else if (/\.ts$/.test(name) && !/\.(spec|int-spec|e2e-spec|testing)\.ts$/.test(name)) {
          for (const m of read(path).matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)) {
            const target = relative(ROOT, resolve(join(ROOT, dirname(path)), (m[1] ?? m[2])!));
            if (!/^(apps|libs)\//.test(target)) outside.push(`${path} -> ${target}`);
          }
        }
      }
    };
    walk('apps');
    walk('libs');
    expect(outside).toEqual([]);
  });
});

describe('.dockerignore', () => {
  it('leaves out installed and built trees, version control and the .env of passwords, and keeps what the build needs', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['.git', 'node_modules', 'dist', '.env']));
    for (const needed of ['package.json', 'package-lock.json', 'apps', 'libs', 'bench', 'chaos', 'examples', 'tsconfig.json', 'tsconfig.build.json']) {
      expect(ignored.some((p) => p === needed || needed.startsWith(`${p}/`))).toBe(false);
    }
  });
});
