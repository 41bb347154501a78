import { chmod, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import lockfile from 'proper-lockfile';

/** The lock itself: a directory, which only one process can create. */
const LOCK_NAME = 'hookprompt.lock';
/** Beside it, who holds it (proper-lockfile records nobody). */
const HOLDER_NAME = 'hookprompt.lock.pid';
/** Taken for the few milliseconds of looking at, breaking and taking the lock. */
const GUARD_NAME = 'hookprompt.lock.guard';

/**
 * A lock whose holder cannot be looked for (another machine, or no record) is given up when
 * it has not been refreshed for this long; the holder refreshes it every half of it.
 */
const STALE_MS = 30_000;
/** The shortest proper-lockfile allows; the guard is held for milliseconds. */
const GUARD_STALE_MS = 2_000;
/** About 4 s of tries: outlasts a guard left by a process killed while holding it. */
const GUARD_RETRIES = { retries: 40, minTimeout: 10, maxTimeout: 100 };

interface Holder {
  pid: number;
  host: string;
  /** The kernel's boot id (Linux): a holder recorded before a reboot is gone. */
  boot?: string;
}

/** Another process has the embedded database open. */
export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';

  constructor(dataDir: string, holder: Holder | undefined) {
    const where = resolve(dataDir) === dataDir ? dataDir : `${dataDir} (${resolve(dataDir)})`;
    const who = !holder
      ? 'another process'
      : holder.host === hostname()
        ? `another process (PID ${holder.pid})`
        : `another process (PID ${holder.pid} on ${holder.host})`;
    super(
      `the embedded database in DATA_DIR ${where} is in use by ${who}; stop that process first ` +
        '(several processes on one database need PostgreSQL: DATABASE_URL)',
    );
  }
}

/** The data directories this process holds, so it never takes one from itself. */
const heldHere = new Set<string>();

/**
 * Makes this process the only one using the embedded database in `dataDir`, or throws
 * DataDirInUseError. Resolves to the function that lets it go. A lock whose holder is gone
 * (killed, or from before a reboot) is broken at once; on a normal exit it is removed.
 */
export async function lockDataDir(
  dataDir: string,
  onLost: (error: Error) => void,
): Promise<() => Promise<void>> {
  const dir = resolve(dataDir);
  const lockPath = join(dir, LOCK_NAME);
  if (heldHere.has(dir)) throw new DataDirInUseError(dataDir, await readHolder(dir));
  // Looking at the holder and taking its place happen under a second, short-lived lock, so two
  // processes starting together never both break the lock of a process that is gone.
  const releaseGuard = await lockfile.lock(lockPath, {
    lockfilePath: join(dir, GUARD_NAME),
    realpath: false,
    stale: GUARD_STALE_MS,
    retries: GUARD_RETRIES,
    onCompromised: () => undefined,
  });
  try {
    const holder = await readHolder(dir);
    if (await exists(lockPath)) {
      const verdict = holderState(holder);
      if (verdict === 'running') throw new DataDirInUseError(dataDir, holder);
      if (verdict === 'gone') await rm(lockPath, { recursive: true, force: true });
    }
    const onCompromised = (error: Error) =>
      onLost(
        new Error(
          `the lock on the embedded database in ${dir} was lost (${error.message}); ` +
            'another process may open it',
        ),
      );
    const release = await lockfile
      .lock(dir, { lockfilePath: lockPath, realpath: false, stale: STALE_MS, onCompromised })
      .catch((error: NodeJS.ErrnoException) => {
        throw error.code === 'ELOCKED' ? new DataDirInUseError(dataDir, holder) : error;
      });
    // Like everything in DATA_DIR, the lock is its owner's alone (src/db/owner-only-files.ts).
    await chmod(lockPath, 0o700);
    await writeHolder(dir);
    heldHere.add(dir);
    return async () => {
      if (!heldHere.delete(dir)) return;
      // The record first: once the lock is gone, the next holder writes its own.
      await rm(join(dir, HOLDER_NAME), { force: true });
      await release();
    };
  } finally {
    await releaseGuard();
  }
}

/**
 * 'gone': the recorded holder ran on this machine and is not running any more (a process with
 * this PID now, if any, is another one: this very process, or one started after a reboot).
 * 'unknown': no record, or another machine's, so only the lock's age can tell.
 */
function holderState(holder: Holder | undefined): 'running' | 'gone' | 'unknown' {
  if (!holder || holder.host !== hostname()) return 'unknown';
  if (holder.boot !== undefined && holder.boot !== bootId) return 'gone';
  if (holder.pid === process.pid) return 'gone';
  return isRunning(holder.pid) ? 'running' : 'gone';
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readHolder(dir: string): Promise<Holder | undefined> {
  try {
    const holder = JSON.parse(await readFile(join(dir, HOLDER_NAME), 'utf8')) as Holder;
    return Number.isInteger(holder.pid) && typeof holder.host === 'string' ? holder : undefined;
  } catch {
    return undefined;
  }
}

/** Written whole or not at all: a reader never sees half a record. */
async function writeHolder(dir: string): Promise<void> {
  const holder: Holder = { pid: process.pid, host: hostname(), boot: bootId };
  const file = join(dir, HOLDER_NAME);
  await writeFile(`${file}.${process.pid}`, `${JSON.stringify(holder)}\n`, { mode: 0o600 });
  await rename(`${file}.${process.pid}`, file);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

const bootId = await readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
  (text) => text.trim(),
  () => undefined,
);
