import type { Response, Router } from 'express';
import { createAlertSchema, type AlertCondition } from '../../alerts/alert-schemas.js';
import { AppError } from '../../platform/errors.js';
import { idRouter } from '../../platform/ids.js';
import {
  CHANNEL_TYPES,
  CONDITION_FIELDS,
  alertFormErrors,
  alertInputOf,
  emptyAlertForm,
  postedAlertForm,
  type AlertForm,
} from './alert-form.js';
import { KIND_FIELDS, isSecretField } from '../channels/destination-form.js';
import type { FieldErrors } from '../forms.js';
import type { PanelServices } from '../panel-services.js';
import { signedIn, workspaceId } from '../panel-auth.js';

/**
 * `/alerts`: each alert rule of the workspace with its state and its latest changes, a form to
 * add one, and a "Send test" button per rule.
 */
export function alertPages(
  ctx: Pick<PanelServices, 'alerts' | 'channels' | 'config' | 'sessions'>,
): Router {
  const router = idRouter();
  router.use((_req, res, next) => {
    res.locals.area = 'alerts';
    next();
  });

  const show = async (
    res: Response,
    form: AlertForm = emptyAlertForm(),
    errors: FieldErrors = {},
    status = 200,
  ) => {
    const workspace = workspaceId(res);
    const [alerts, history, channels] = await Promise.all([
      ctx.alerts.list(workspace),
      ctx.alerts.history(workspace),
      ctx.channels.list(workspace),
    ]);
    const channelNames = new Map(channels.map((channel) => [channel.id, channel.name]));
    res.status(status).render('alerts/index', {
      title: 'Alerts',
      alerts,
      history,
      describe: (condition: AlertCondition) => describeCondition(condition, channelNames),
      valueOf: describeValue,
      intervalS: ctx.config.alertIntervalMs / 1000,
      form,
      errors,
      channels,
      conditionFields: CONDITION_FIELDS,
      channelTypes: CHANNEL_TYPES,
      kindFields: KIND_FIELDS,
      isSecretField,
    });
  };

  router.get('/', async (_req, res) => {
    await show(res);
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
      return show(res, form, errors, error instanceof AppError && error.status === 409 ? 409 : 400);
    }
    await ctx.sessions.flash(signedIn(res).session, { kind: 'ok', text: 'Alert added.' });
    res.redirect(303, `/alerts#alert-${created.id}`);
  });

  /** "Send test": one `alert.test` notification now; the page says what the target answered. */
  router.post('/:alertId/test', async (req, res) => {
    const id = req.params.alertId;
    const test = await ctx.alerts.test(workspaceId(res), id);
    await ctx.sessions.flash(
      signedIn(res).session,
      test.ok
        ? { kind: 'ok', text: 'Test notification sent.' }
        : { kind: 'error', text: `Test notification not sent: ${test.error ?? 'unknown error'}.` },
    );
    res.redirect(303, `/alerts#alert-${id}`);
  });

  return router;
}

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
      return value > 0 ? 'failed' : 'delivered';
    case 'queue_age':
      return `${Math.round(value)} s`;
    case 'budget':
      return `${Math.round(value * 10) / 10}% spent`;
  }
}
