import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/platform/paths.js';

const readJson = (file: string) =>
  JSON.parse(readFileSync(join(projectRoot, file), 'utf8')) as Record<string, unknown>;

describe('npm ci', () => {
  it('allows the install scripts of exactly the dependencies that have one', () => {
    const lock = readJson('package-lock.json') as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.replace(/^.*node_modules\//, ''));
    const allowed = readJson('package.json').allowScripts as Record<string, boolean>;
    expect(Object.keys(allowed).sort()).toEqual([...new Set(withScripts)].sort());
    expect(Object.values(allowed).every((allow) => allow === true)).toBe(true);
  });

  it('gives argon2 a native binding that loads and hashes on this machine', () => {
    // In a child process: a binding built for another system can crash the process loading it.
    const script = `
      const { dirname } = require('node:path');
      const binding = require('node-gyp-build').resolve(dirname(require.resolve('argon2')));
      const argon2 = require('argon2');
      argon2.hash('correct horse').then(async (hash) => {
        const ok = await argon2.verify(hash, 'correct horse');
        console.log(JSON.stringify({ binding, ok }));
      });
    `;
    const run = spawnSync(process.execPath, ['-e', script], {
      cwd: projectRoot,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const { binding, ok } = JSON.parse(run.stdout) as { binding: string; ok: boolean };
    expect(binding).toMatch(/argon2.*\.node$/);
    expect(ok).toBe(true);
  });
});
