import { Router } from 'express';
import { DatabaseTimeoutError, type Database } from '../db/database.js';
import type { RedisConnection } from '../platform/redis.js';

/** How long `/readyz` waits for the database: a probe must answer even when it does not. */
const READY_CHECK_MS = 2_000;

/**
 * `/healthz`: the process answers. `/readyz`: each dependency's state,
 * `{"status", "database": "ok"|"timeout"|"unreachable", "redis": "ok"|"connecting"|"unavailable"|"not_configured"}`;
 * 503 only when the database is not ready (without Redis the service works, unlimited).
 */
export function healthRoutes(db: Database, redis: RedisConnection | undefined): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const database = await databaseState(db);
    const ready = database === 'ok';
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : 'unavailable',
      database,
      redis: redis ? redis.status : 'not_configured',
    });
  });
  return router;
}

async function databaseState(db: Database): Promise<'ok' | 'timeout' | 'unreachable'> {
  try {
    await db.query('select 1', [], { deadline: Date.now() + READY_CHECK_MS });
    return 'ok';
  } catch (error) {
    return error instanceof DatabaseTimeoutError ? 'timeout' : 'unreachable';
  }
}
