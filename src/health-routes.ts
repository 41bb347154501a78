import { Router } from 'express';
import type { Database } from './db/database.js';

/** `/healthz`: the process answers. `/readyz`: the database answers too. */
export function healthRoutes(db: Database): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    try {
      await withTimeout(db.query('select 1'), 2_000);
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ status: 'unavailable', detail: 'database unreachable' });
    }
  });
  return router;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
