import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../src/platform/paths.js';
import { TSX_IMPORT } from './server-process.js';

export interface AdminRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The program of `npm run admin -- …`, with only the environment given. */
export const ADMIN_COMMAND = [...TSX_IMPORT, join(projectRoot, 'src/auth/admin-cli.ts')];

/** Runs `npm run admin -- <args>` with standard input from a pipe; resolves when it exits. */
export function runAdmin(
  args: string[],
  env: Record<string, string>,
  input = '',
): Promise<AdminRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...ADMIN_COMMAND, ...args], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}
