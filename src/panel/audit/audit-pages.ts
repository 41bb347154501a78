import { Router, type Request } from 'express';
import { ZodError } from 'zod';
import { AUDIT_EXPORT_TYPE } from '../../audit/audit-routes.js';
import { parseAuditExportQuery, parseAuditQuery } from '../../audit/audit-schemas.js';
import { AppError, fieldErrorsOf } from '../../platform/errors.js';
import type { PanelServices } from '../panel-services.js';
import { workspaceId } from '../panel-auth.js';

/** The filter form's fields, as the API names its query parameters. */
const FILTERS = ['action', 'actor_id', 'target_kind', 'target_id', 'from', 'to'] as const;

/** The page's filter as given, empty fields left out (an empty form field means no filter). */
function givenFilter(req: Request): Record<string, string> {
  const given: Record<string, string> = {};
  for (const name of [...FILTERS, 'cursor']) {
    const value = req.query[name];
    if (typeof value === 'string' && value.trim() !== '') given[name] = value.trim();
  }
  return given;
}

/** `/audit`: the workspace's audit log with the API's filters, and its JSON Lines download. */
export function auditPages(ctx: PanelServices): Router {
  const router = Router();
  router.use((_req, res, next) => {
    res.locals.area = 'workspace';
    next();
  });

  router.get('/', async (req, res) => {
    const filter = givenFilter(req);
    const { cursor: _cursor, ...rest } = filter;
    const search = (extra: Record<string, string>) =>
      new URLSearchParams({ ...rest, ...extra }).toString();
    let query;
    try {
      query = parseAuditQuery(filter);
    } catch (error) {
      if (!(error instanceof ZodError)) throw error;
      const errors = fieldErrorsOf(error) ?? [];
      return res.status(400).render('audit/index', { filter, page: undefined, errors, search });
    }
    const page = await ctx.auditLog.list(workspaceId(res), query);
    res.render('audit/index', { filter, page, errors: [], search });
  });

  router.get('/export', async (req, res) => {
    const { cursor: _cursor, ...filter } = givenFilter(req);
    let query;
    try {
      query = parseAuditExportQuery(filter);
    } catch (error) {
      if (error instanceof ZodError)
        throw new AppError(400, 'validation_failed', 'Invalid filter', 'Check the filter fields.');
      throw error;
    }
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    res.setHeader('Content-Type', AUDIT_EXPORT_TYPE);
    res.setHeader('Content-Disposition', `attachment; filename="audit-${stamp}.jsonl"`);
    res.setHeader('Cache-Control', 'no-store');
    await ctx.auditLog.export(workspaceId(res), query, res);
    res.end();
  });

  return router;
}
