import type { Response, Router } from 'express';
import { isDeepStrictEqual } from 'node:util';
import type { AlertJson } from '../../alerts/alert-object.js';
import {
  createAlertSchema,
  updateAlertSchema,
  type AlertCondition,
} from '../../alerts/alert-schemas.js';
import { AppError } from '../../platform/errors.js';
import { idRouter } from '../../platform/ids.js';
import {
  CHANNEL_TYPES,
  CONDITION_FIELDS,
  CONDITION_LABELS,
  FIELD_LABELS,
  NOTIFY_LABELS,
  alertFormErrors,
  alertInputOf,
  emptyAlertForm,
  formOfAlert,
  postedAlertForm,
  type AlertForm,
} from './alert-form.js';
import { KIND_FIELDS, isSecretField } from '../channels/destination-form.js';
import type { FieldErrors } from '../forms.js';
import type { PanelServices } from '../panel-services.js';
import { formField, signedIn, workspaceId } from '../panel-auth.js';

type AlertPagesServices = Pick<PanelServices, 'alerts' | 'channels' | 'config' | 'sessions'>;

/**
 * `/alerts`: each alert rule of the workspace with its state and its latest changes, and a form
 * to add one; `/alerts/{id}` edits one, turns it off or on, sends a test and, after a page that
 * asks, deletes it. Every action is a form: nothing needs JavaScript.
 */
export function alertPages(ctx: AlertPagesServices): Router {
  const router = idRouter();
  router.use((_req, res, next) => {
    res.locals.area = 'alerts';
    next();
  });

  /** What the pages' forms and descriptions need, besides the alerts. */
  const formLocals = async (res: Response) => {
    const channels = await ctx.channels.list(workspaceId(res));
    const channelNames = new Map(channels.map((channel) => [channel.id, channel.name]));
    return {
      channels,
      describe: (condition: AlertCondition) => describeCondition(condition, channelNames),
      valueOf: describeValue,
      intervalS: ctx.config.alertIntervalMs / 1000,
      conditionFields: CONDITION_FIELDS,
      conditionLabels: CONDITION_LABELS,
      channelTypes: CHANNEL_TYPES,
      kindFields: KIND_FIELDS,
      notifyLabels: NOTIFY_LABELS,
      fieldLabels: FIELD_LABELS,
      errorLabels: Object.fromEntries(
        Object.entries(FIELD_LABELS).map(([field, label]) => [`alert-${field}`, label]),
      ),
      isSecretField,
    };
  };

  const showList = async (
    res: Response,
    form: AlertForm = emptyAlertForm(),
    errors: FieldErrors = {},
    status = 200,
  ) => {
    const workspace = workspaceId(res);
    const [alerts, history, locals] = await Promise.all([
      ctx.alerts.list(workspace),
      ctx.alerts.history(workspace),
      formLocals(res),
    ]);
    res.status(status).render('alerts/index', {
      ...locals,
      title: 'Alerts',
      alerts,
      history,
      form,
      errors,
    });
  };

  const showEdit = async (
    res: Response,
    alert: AlertJson,
    form: AlertForm = formOfAlert(alert),
    errors: FieldErrors = {},
    status = 200,
  ) => {
    const [history, locals] = await Promise.all([
      ctx.alerts.history(workspaceId(res)),
      formLocals(res),
    ]);
    res.status(status).render('alerts/edit', {
      ...locals,
      title: alert.name,
      alert,
      changes: history.get(alert.id) ?? [],
      form,
      errors,
    });
  };

  const flash = (res: Response, kind: 'ok' | 'error', text: string) =>
    ctx.sessions.flash(signedIn(res).session, { kind, text });

  router.get('/', async (_req, res) => {
    await showList(res);
  });

  /** "Add an alert": the API's checks and limit, their errors shown at the form's fields. */
  router.post('/', async (req, res) => {
    const form = postedAlertForm(req.body);
    let created: { id: string };
    try {
      created = await ctx.alerts.create(
        workspaceId(res),
        createAlertSchema.parse(alertInputOf(form)),
      );
    } catch (error) {
      const errors = alertFormErrors(error, form);
      return showList(res, form, errors, statusOf(error));
    }
    await flash(res, 'ok', 'Alert added.');
    res.redirect(303, `/alerts#alert-${created.id}`);
  });

  router.get('/:alertId', async (req, res) => {
    await showEdit(res, await ctx.alerts.get(workspaceId(res), req.params.alertId));
  });

  /**
   * Saves the edit form. The condition is sent only when it changed: a new condition starts the
   * alert afresh, which renaming it must not do.
   */
  router.post('/:alertId', async (req, res) => {
    const ws = workspaceId(res);
    const alert = await ctx.alerts.get(ws, req.params.alertId);
    const form = postedAlertForm(req.body);
    const input = alertInputOf(form);
    if (isDeepStrictEqual(input.condition, alert.condition)) delete input.condition;
    try {
      await ctx.alerts.update(ws, alert.id, updateAlertSchema.parse(input));
    } catch (error) {
      return showEdit(res, alert, form, alertFormErrors(error, form), statusOf(error));
    }
    await flash(res, 'ok', 'Alert saved.');
    res.redirect(303, `/alerts/${alert.id}`);
  });

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    /** Turns the alert on (checked again from the next interval) or off (never checked). */
    router.post(`/:alertId/${action}`, async (req, res) => {
      const alert = await ctx.alerts.update(workspaceId(res), req.params.alertId, { enabled });
      await flash(
        res,
        'ok',
        enabled
          ? `Alert “${alert.name}” is on.`
          : `Alert “${alert.name}” is off: it is not checked.`,
      );
      res.redirect(303, backTo(req.body, alert.id));
    });
  }

  /** "Send test": one `alert.test` notification now; the page says what the target answered. */
  router.post('/:alertId/test', async (req, res) => {
    const id = req.params.alertId;
    const test = await ctx.alerts.test(workspaceId(res), id);
    await flash(
      res,
      test.ok ? 'ok' : 'error',
      test.ok
        ? 'Test notification sent.'
        : `Test notification not sent: ${test.error ?? 'unknown error'}.`,
    );
    res.redirect(303, backTo(req.body, id));
  });

  router.get('/:alertId/delete', async (req, res) => {
    const alert = await ctx.alerts.get(workspaceId(res), req.params.alertId);
    res.render('alerts/confirm-delete', { title: `Delete · ${alert.name}`, alert });
  });

  router.post('/:alertId/delete', async (req, res) => {
    const ws = workspaceId(res);
    const alert = await ctx.alerts.get(ws, req.params.alertId);
    await ctx.alerts.delete(ws, alert.id);
    await flash(res, 'ok', `Alert “${alert.name}” deleted, with its history.`);
    res.redirect(303, '/alerts');
  });

  return router;
}

/** The status a refused form is shown again with: the limit's 409, else 400. */
const statusOf = (error: unknown) =>
  error instanceof AppError && error.status === 409 ? 409 : 400;

/** Where an action on the alert returns: its own page when sent from there, else its row. */
const backTo = (body: unknown, id: string) =>
  formField(body, 'back') === 'edit' ? `/alerts/${id}` : `/alerts#alert-${id}`;

/**
 * A condition in words: "Failure rate ≥ 25% over 300 s (at least 10 events), channel “Shop”"; a
 * channel since deleted is named by its id.
 */
export function describeCondition(
  condition: AlertCondition,
  channelNames: ReadonlyMap<string, string>,
): string {
  const id = 'channel_id' in condition ? condition.channel_id : undefined;
  const name = id ? channelNames.get(id) : undefined;
  const channel = !id ? ', any channel' : name ? `, channel “${name}”` : `, channel #${id}`;
  switch (condition.type) {
    case 'failure_rate':
      return `Failure rate ≥ ${condition.threshold * 100}% over ${condition.window_s} s (at least ${condition.min_events} events)${channel}`;
    case 'rejections':
      return `Rejected requests ≥ ${condition.count} over ${condition.window_s} s${channel}`;
    case 'delivery_failed':
      return condition.after_attempts === undefined
        ? `A delivery failed${channel}`
        : `A delivery failed ${condition.after_attempts} attempt${condition.after_attempts === 1 ? '' : 's'}${channel}`;
    case 'queue_age':
      return `Oldest pending event older than ${condition.seconds} s`;
    case 'budget':
      return `${condition.percent}% of the monthly budget spent`;
    case 'approval_waiting':
      return `A tool call waits for approval${channel}`;
  }
}

/** What a change's value means, by condition: "40%", "12 rejected", "95 s". */
export function describeValue(condition: AlertCondition, value: number | null): string {
  if (value === null) return '';
  switch (condition.type) {
    case 'failure_rate':
      return `${Math.round(value * 1000) / 10}%`;
    case 'rejections':
      return `${value} rejected`;
    case 'delivery_failed':
      return value === 0 ? 'none failing' : `${value} target${value === 1 ? '' : 's'} failing`;
    case 'queue_age':
      return `${Math.round(value)} s`;
    case 'budget':
      return `${Math.round(value * 10) / 10}% spent`;
    case 'approval_waiting':
      return `${value} waiting`;
  }
}
