import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The project root (where package.json is), whether running from src/ or a build in dist/. */
function findProjectRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${start}`);
    dir = parent;
  }
  return dir;
}

export const projectRoot = findProjectRoot(import.meta.dirname);
export const migrationsDir = join(projectRoot, 'migrations');
export const viewsDir = join(projectRoot, 'views');
export const publicDir = join(projectRoot, 'public');
export const openApiFile = join(projectRoot, 'docs', 'openapi.yaml');
