import type { Response, Router } from 'express';
import { AppError, fieldErrorsOf } from '../../platform/errors.js';
import { idRouter } from '../../platform/ids.js';
import { DEFAULT_PROVIDER, PROVIDER_KINDS } from '../../providers/provider-kinds.js';
import {
  createProviderSchema,
  testProviderSchema,
  updateProviderSchema,
} from '../../providers/providers-schemas.js';
import type { Channel } from '../../channels/channels-service.js';
import type { Provider, ProviderCalls, ProviderTest } from '../../providers/providers-service.js';
import type { PanelServices } from '../panel-services.js';
import { fieldErrors, type FieldErrors } from '../forms.js';
import { formField, signedIn, workspaceId } from '../panel-auth.js';

interface ProviderForm {
  name: string;
  kind: string;
  base_url: string;
}

const EMPTY_FORM: ProviderForm = { name: '', kind: 'openai', base_url: '' };

/**
 * `/providers`: the AI providers channels may name. The API key is write-only here too: the
 * page says whether one is set, an empty key field keeps it, and "Clear the key" removes it.
 * The list shows each provider's calls of the last 24 hours and the channels that ask it.
 */
export function providerPages(ctx: PanelServices): Router {
  const router = idRouter({ providerId: [DEFAULT_PROVIDER] });
  router.use((_req, res, next) => {
    res.locals.area = 'providers';
    next();
  });

  const showList = async (res: Response, form = EMPTY_FORM, errors: FieldErrors = {}) => {
    const ws = workspaceId(res);
    const [providers, calls, channels] = await Promise.all([
      ctx.providers.list(ws),
      ctx.providers.callsOfLastDay(ws),
      ctx.channels.list(ws),
    ]);
    res.status(Object.keys(errors).length ? 400 : 200).render('providers/index', {
      title: 'AI providers',
      providers: providers.map((provider) => ({
        ...provider,
        calls: callsShown(calls.find((c) => c.provider === provider.name)),
        channels: channelsUsing(channels, provider.name),
      })),
      kinds: PROVIDER_KINDS,
      form,
      errors,
    });
  };

  const showEdit = async (
    res: Response,
    provider: Provider,
    extras: {
      form?: ProviderForm;
      errors?: FieldErrors;
      test?: ProviderTest;
      model?: string;
      status?: number;
    },
  ) => {
    const errors = extras.errors ?? {};
    res.status(extras.status ?? (Object.keys(errors).length ? 400 : 200)).render('providers/edit', {
      title: provider.name,
      provider,
      form: extras.form ?? {
        name: provider.name,
        kind: provider.kind,
        base_url: provider.base_url ?? '',
      },
      errors,
      test: extras.test,
      model: extras.model ?? '',
    });
  };

  router.get('/', async (_req, res) => showList(res));

  router.post('/', async (req, res) => {
    const form = formOf(req.body);
    const parsed = createProviderSchema.safeParse({
      name: form.name,
      kind: form.kind,
      base_url: form.base_url || null,
      api_key: formField(req.body, 'api_key') || null,
    });
    if (!parsed.success) return showList(res, form, fieldErrors(parsed.error));
    try {
      await ctx.providers.create(workspaceId(res), parsed.data);
    } catch (error) {
      const errors = errorsOf(error);
      if (!errors) throw error;
      return showList(res, form, errors);
    }
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: `Provider ${parsed.data.name} added: channels may now name it.`,
    });
    res.redirect(303, '/providers');
  });

  router.get('/:providerId', async (req, res) => {
    const provider = await ctx.providers.get(workspaceId(res), req.params.providerId);
    await showEdit(res, provider, {});
  });

  router.post('/:providerId', async (req, res) => {
    const ws = workspaceId(res);
    const provider = await ctx.providers.get(ws, req.params.providerId);
    const form = { ...formOf(req.body), kind: provider.kind };
    const key = formField(req.body, 'api_key');
    const parsed = updateProviderSchema.safeParse({
      name: form.name,
      base_url: form.base_url || null,
      api_key: formField(req.body, 'clear_api_key') === '1' ? null : key || undefined,
    });
    if (!parsed.success)
      return showEdit(res, provider, { form, errors: fieldErrors(parsed.error) });
    try {
      await ctx.providers.update(ws, provider.id, parsed.data);
    } catch (error) {
      const errors = errorsOf(error);
      if (!errors) throw error;
      return showEdit(res, provider, { form, errors });
    }
    await ctx.sessions.flash(signedIn(res).session, { kind: 'ok', text: 'Provider saved.' });
    res.redirect(303, `/providers/${provider.id}`);
  });

  router.post('/:providerId/delete', async (req, res) => {
    const ws = workspaceId(res);
    const provider = await ctx.providers.get(ws, req.params.providerId);
    try {
      await ctx.providers.delete(ws, provider.id);
    } catch (error) {
      const errors = errorsOf(error);
      if (!errors) throw error;
      return showEdit(res, provider, { errors });
    }
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: `Provider ${provider.name} deleted.`,
    });
    res.redirect(303, '/providers');
  });

  router.post('/:providerId/test', async (req, res) => {
    const ws = workspaceId(res);
    const provider = await ctx.providers.get(ws, req.params.providerId);
    const model = formField(req.body, 'model').trim();
    const parsed = testProviderSchema.safeParse({ model });
    if (!parsed.success) {
      return showEdit(res, provider, { model, errors: { model: 'Name the model to ask.' } });
    }
    let test: ProviderTest;
    try {
      test = await ctx.providers.test(ws, provider.id, parsed.data.model);
    } catch (error) {
      // A spent budget refuses the test as it refuses the API's (403), shown beside the form.
      if (!(error instanceof AppError) || error.code !== 'budget_exceeded') throw error;
      const refused: ProviderTest = { ok: false, error: error.detail };
      return showEdit(res, provider, { test: refused, model, status: error.status });
    }
    await showEdit(res, provider, { test, model });
  });

  return router;
}

/** A provider's calls of the last 24 hours as the list shows them. */
interface CallsShown {
  calls: number;
  /** `20%`, to a tenth below 10 %; `—` without calls. */
  error_rate: string;
  /** `340 ms`; `—` without calls. */
  p50: string;
}

function callsShown(calls: ProviderCalls | undefined): CallsShown {
  if (!calls || calls.calls === 0) return { calls: 0, error_rate: '—', p50: '—' };
  const rate = (calls.errors / calls.calls) * 100;
  return {
    calls: calls.calls,
    error_rate: `${rate < 10 ? Number(rate.toFixed(1)) : Math.round(rate)}%`,
    p50: `${Math.round(calls.p50_ms)} ms`,
  };
}

interface ChannelUsing {
  id: string;
  name: string;
  role: 'primary' | 'fallback';
}

/** The channels whose AI settings ask the provider, first or as a fallback. */
function channelsUsing(channels: readonly Channel[], provider: string): ChannelUsing[] {
  return channels.flatMap((channel): ChannelUsing[] => {
    if (channel.ai.provider === provider) {
      return [{ id: channel.id, name: channel.name, role: 'primary' }];
    }
    if (channel.ai.fallbacks.some((fallback) => fallback.provider === provider)) {
      return [{ id: channel.id, name: channel.name, role: 'fallback' }];
    }
    return [];
  });
}

function formOf(body: unknown): ProviderForm {
  return {
    name: formField(body, 'name').trim(),
    kind: formField(body, 'kind'),
    base_url: formField(body, 'base_url').trim(),
  };
}

/** The refusals shown next to the form's fields; anything else is the error page's. */
function errorsOf(error: unknown): FieldErrors | undefined {
  if (!(error instanceof AppError) || error.status >= 500) return undefined;
  const baseUrl = fieldErrorsOf(error)?.find((field) => field.path === 'base_url');
  if (baseUrl) return { base_url: baseUrl.message };
  if (error.code === 'provider_name_taken') return { name: error.detail };
  if (error.code === 'provider_in_use' || error.code === 'provider_read_only') {
    return { form: error.detail };
  }
  return undefined;
}
