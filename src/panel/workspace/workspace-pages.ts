import { Router, type Response } from 'express';
import { z } from 'zod';
import type { PanelServices } from '../panel-services.js';
import { notFound } from '../../platform/errors.js';
import { idRouter } from '../../platform/ids.js';
import { ROLES, roleSchema } from '../../platform/roles.js';
import { workspacePatchSchema } from '../../workspaces/workspaces-schemas.js';
import { fieldErrors, type FieldErrors } from '../forms.js';
import { localPath } from '../local-path.js';
import { formField, requireWorkspace, signedIn, workspaceId } from '../panel-auth.js';

const workspaceName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters');

/** What the Workspace page's settings form holds, as typed. */
interface WorkspaceForm {
  name: string;
  chat_quota: string;
  monthly_budget_usd: string;
}

/** `/workspace`: quota, budget, usage and API keys of the current workspace; switching workspaces. */
export function workspacePages(ctx: PanelServices): Router {
  const router = idRouter();
  router.use((_req, res, next) => {
    res.locals.area = 'workspace';
    next();
  });

  const show = async (
    res: Response,
    status = 200,
    form?: WorkspaceForm,
    errors: FieldErrors = {},
  ) => {
    const ws = workspaceId(res);
    const [workspace, apiKeys, usage, members, invitations, channels] = await Promise.all([
      ctx.workspaces.get(ws),
      ctx.apiKeys.list(ws),
      ctx.usage.report(ws),
      ctx.invitations.members(ws),
      ctx.invitations.pending(ws),
      ctx.channels.list(ws),
    ]);
    // The charts' days, with what their AI calls cost (trials included); and this month's spend
    // as GET /api/v1/spend reports it: by model, by channel, and the calls of unknown cost,
    // which spent_usd cannot count.
    const [spend, month, cacheSaved] = await Promise.all([
      ctx.spend.report(ws, { from: new Date(usage.from), to: new Date(usage.to) }),
      ctx.spend.report(ws),
      ctx.replyCache.savingsThisMonth(ws),
    ]);
    const channelNames = new Map(channels.map((channel) => [channel.id, channel.name]));
    // A day whose calls all cost an unknown amount is unknown (null), not $0.
    const costByDay = new Map(
      spend.by_day.map((day) => [day.day, day.calls > 0 ? day.cost_usd : 0]),
    );
    res.status(status).render('workspace/show', {
      title: 'Workspace',
      ws: workspace,
      form: form ?? {
        name: workspace.name,
        chat_quota: String(workspace.chat_quota),
        monthly_budget_usd:
          workspace.monthly_budget_usd === null ? '' : String(workspace.monthly_budget_usd),
      },
      errors,
      apiKeys,
      usage,
      costByDay,
      spendTotal: spend.total_usd,
      spendUnpriced: spend.unpriced_calls,
      monthUnpriced: month.unpriced_calls,
      cacheSaved,
      monthByModel: month.by_model,
      // Deleted channels keep their spend (their calls were paid), under their id.
      monthByChannel: month.by_channel.map((row) => ({
        ...row,
        name: row.channel_id === null ? null : (channelNames.get(row.channel_id) ?? null),
      })),
      members,
      invitations,
      usedShare:
        workspace.chat_quota > 0 ? Math.min(1, workspace.chats_used / workspace.chat_quota) : 1,
      roles: ROLES,
      adminKeyApplies: ws === ctx.defaultWorkspaceId && ctx.config.adminApiKey !== undefined,
      apiBase: `${ctx.config.publicBaseUrl}/api/v1`,
    });
  };

  // Switching is allowed for an admin who has lost all workspaces, hence before requireWorkspace.
  router.post('/switch', async (req, res) => {
    const { session, workspaces } = signedIn(res);
    const target = workspaces.find((w) => w.id === formField(req.body, 'workspace_id'));
    if (!target) throw notFound('This workspace');
    await ctx.sessions.switchWorkspace(session, target.id);
    // Another workspace has other channels and events: go back to the area, not to an item.
    const area = localPath(formField(req.body, 'back')).split(/[/?#]/)[1];
    res.redirect(
      303,
      `/${['channels', 'logs', 'workspace', 'account'].includes(area ?? '') ? area : 'channels'}`,
    );
  });

  router.use(requireWorkspace);

  router.get('/', async (_req, res) => {
    await show(res);
  });

  router.post('/', async (req, res) => {
    const form: WorkspaceForm = {
      name: formField(req.body, 'name'),
      chat_quota: formField(req.body, 'chat_quota').trim(),
      monthly_budget_usd: formField(req.body, 'monthly_budget_usd').trim(),
    };
    const budget = form.monthly_budget_usd;
    const parsed = workspacePatchSchema.safeParse({
      name: form.name,
      chat_quota: /^\d+$/.test(form.chat_quota) ? Number(form.chat_quota) : form.chat_quota,
      // Empty: no budget.
      monthly_budget_usd:
        budget === '' ? null : /^\d+(\.\d+)?$/.test(budget) ? Number(budget) : budget,
    });
    if (!parsed.success) return show(res, 400, form, fieldErrors(parsed.error));
    await ctx.workspaces.update(workspaceId(res), parsed.data);
    await ctx.sessions.flash(signedIn(res).session, { kind: 'ok', text: 'Workspace saved.' });
    res.redirect(303, '/workspace');
  });

  router.post('/reset-usage', async (_req, res) => {
    await ctx.workspaces.update(workspaceId(res), { chats_used: 0 });
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: 'Usage reset to 0: the full chat quota is available again.',
    });
    res.redirect(303, '/workspace');
  });

  router.post('/api-keys', async (req, res) => {
    const name = formField(req.body, 'name').trim() || 'Management API key';
    const parsed = workspaceName.safeParse(name);
    if (!parsed.success)
      return show(res, 400, undefined, {
        key_name: parsed.error.issues[0]?.message ?? 'is invalid',
      });
    // As the API's: a key made without a role is an owner.
    const role = roleSchema.safeParse(formField(req.body, 'role') || 'owner');
    if (!role.success)
      return show(res, 400, undefined, { key_name: 'role must be one of owner, editor or viewer' });
    const { key, apiKey } = await ctx.apiKeys.create(workspaceId(res), parsed.data, role.data);
    ctx.log.info({ apiKeyId: apiKey.id }, 'API key created in the panel');
    // The key is in this answer only; it is not stored, so it cannot be shown again.
    res.status(201).render('workspace/key-created', {
      title: 'New API key',
      key,
      apiKey,
      apiBase: `${ctx.config.publicBaseUrl}/api/v1`,
    });
  });

  router.post('/api-keys/:keyId/revoke', async (req, res) => {
    await ctx.apiKeys.revoke(workspaceId(res), req.params.keyId);
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: 'API key revoked: requests with it now get 401.',
    });
    res.redirect(303, '/workspace');
  });

  return router;
}

/** `/workspaces/new`: an admin creates a workspace and becomes its first member. */
export function newWorkspacePages(ctx: PanelServices): Router {
  const router = Router();
  router.use((_req, res, next) => {
    res.locals.area = 'workspace';
    next();
  });

  router.get('/new', (_req, res) => {
    res.render('workspace/new', { title: 'New workspace', form: { name: '' }, errors: {} });
  });

  router.post('/', async (req, res) => {
    const form = { name: formField(req.body, 'name') };
    const parsed = workspaceName.safeParse(form.name);
    if (!parsed.success) {
      return res.status(400).render('workspace/new', {
        title: 'New workspace',
        form,
        errors: { name: parsed.error.issues[0]?.message ?? 'is invalid' },
      });
    }
    const { session, admin } = signedIn(res);
    const workspace = await ctx.admins.createWorkspace(
      admin.id,
      parsed.data,
      ctx.config.defaultChatQuota,
    );
    await ctx.sessions.switchWorkspace(session, workspace.id);
    await ctx.sessions.flash(session, {
      kind: 'ok',
      text: `Workspace “${workspace.name}” created and opened. Create its first channel.`,
    });
    res.redirect(303, '/channels');
  });

  return router;
}
