import { Router } from 'express';
import type { AuditLog } from './audit-log.js';
import { parseAuditExportQuery, parseAuditQuery } from './audit-schemas.js';

/** JSON Lines, as Brain Logs' export. */
export const AUDIT_EXPORT_TYPE = 'application/jsonl; charset=utf-8';

/** `/api/v1/audit`: the workspace's audit log, read only (no route changes or deletes an entry). */
export function auditRoutes(auditLog: AuditLog): Router {
  const router = Router();

  router.get('/audit', async (req, res) => {
    res.json(await auditLog.list(res.locals.workspaceId, parseAuditQuery(req.query)));
  });

  router.get('/audit/export', async (req, res) => {
    const query = parseAuditExportQuery(req.query);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    res.status(200);
    res.setHeader('Content-Type', AUDIT_EXPORT_TYPE);
    res.setHeader('Content-Disposition', `attachment; filename="audit-${stamp}.jsonl"`);
    res.setHeader('Cache-Control', 'no-store');
    await auditLog.export(res.locals.workspaceId, query, res);
    res.end();
  });

  return router;
}
