import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PGlite, postgresMod } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/** The permission bits of group and others: none of them on anything in DATA_DIR. */
const GROUP_AND_OTHERS = 0o077;

/** The calls of Emscripten's file system that give a file or a directory its mode. */
interface EmscriptenModes {
  mknod(path: string, mode: number, dev: number): unknown;
  doChmod(stream: unknown, node: unknown, mode: number, dontFollow?: boolean): unknown;
}

/**
 * The embedded database's files on disk, readable by the service's user only. PGlite's
 * Emscripten file system gives each file the mode it is asked for, ignoring the process's
 * umask: the cluster it unpacks comes out 0666, and some files PostgreSQL writes later 0644.
 * Here every file and directory it creates or changes the mode of has the group's and others'
 * bits dropped, whatever it asked for.
 */
export class OwnerOnlyNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Partial<postgresMod.PostgresMod>) {
    const { emscriptenOpts } = await super.init(pg, opts);
    const ownerOnly = (mod: postgresMod.PostgresMod) => {
      const fs = mod.FS as unknown as EmscriptenModes;
      if (typeof fs.mknod !== 'function' || typeof fs.doChmod !== 'function')
        throw new Error(
          "the embedded database's file system has changed: its files' modes cannot be kept private",
        );
      const { mknod, doChmod } = fs;
      fs.mknod = (path, mode, dev) => mknod.call(fs, path, mode & ~GROUP_AND_OTHERS, dev);
      fs.doChmod = (stream, node, mode, dontFollow) =>
        doChmod.call(fs, stream, node, mode & ~GROUP_AND_OTHERS, dontFollow);
    };
    return {
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [...(emscriptenOpts.preRun ?? []), ownerOnly],
      },
    };
  }
}

/**
 * Makes `dir` (created if missing) and everything in it readable by its owner only: the
 * directory and those under it `0700`-like, files without the group's and others' bits. Run at
 * every open, so a data directory written before this rule (or copied in) is put right.
 */
export async function keepOwnerOnly(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await restrict(dir);
}

async function restrict(path: string): Promise<void> {
  const stats = await lstat(path).catch(ignoreGone);
  if (!stats || stats.isSymbolicLink()) return;
  if ((stats.mode & GROUP_AND_OTHERS) !== 0)
    await chmod(path, stats.mode & 0o7777 & ~GROUP_AND_OTHERS).catch(ignoreGone);
  if (!stats.isDirectory()) return;
  for (const name of (await readdir(path).catch(ignoreGone)) ?? [])
    await restrict(join(path, name));
}

/**
 * Another process starting on the same directory makes and removes its lock's files while this
 * one walks it (src/db/data-dir-lock.ts): one gone in between needs no mode.
 */
function ignoreGone(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}
