import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './server-process.js';

/** Builds dist/ as `npm run build` does; true when tsc reported errors (it still emits). */
export function build(): boolean {
  console.log('building (npm run build)...');
  const result = spawnSync('npm', ['run', '--silent', 'build'], {
    cwd: projectRoot,
    encoding: 'utf8',
  });
  if (result.status === 0) return false;
  if (!existsSync(join(projectRoot, 'dist', 'main.js'))) {
    throw new Error(
      `npm run build failed and left no dist/main.js:\n${result.stdout}${result.stderr}`,
    );
  }
  console.warn(
    `warning: tsc reported errors; measuring what it emitted anyway:\n${result.stdout.slice(0, 2000)}`,
  );
  return true;
}
