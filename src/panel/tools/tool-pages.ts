import type { Response, Router } from 'express';
import { AppError, fieldErrorsOf } from '../../platform/errors.js';
import { idRouter } from '../../platform/ids.js';
import type { Channel } from '../../channels/channels-service.js';
import type { ToolJson } from '../../tools/tools-service.js';
import type { ToolTest } from '../../tools/tool-runner.js';
import {
  createToolSchema,
  TOOL_METHODS,
  updateToolSchema,
  type ToolKind,
} from '../../tools/tool-schemas.js';
import type { PanelServices } from '../panel-services.js';
import { fieldErrors, jsonObjectText, textareaText, type FieldErrors } from '../forms.js';
import { formField, signedIn, workspaceId } from '../panel-auth.js';

/** The tool form as typed: every member a text field, parsed only when saved. */
export interface ToolForm {
  name: string;
  kind: ToolKind;
  description: string;
  url: string;
  method: string;
  input_schema: string;
  allowed_tools: string;
  approval: string;
  safe_in_trials: boolean;
  timeout_ms: string;
  /** `Name: value` lines; empty on the edit page keeps the stored headers. */
  headers: string;
}

const EMPTY_FORM: ToolForm = {
  name: '',
  kind: 'http',
  description: '',
  url: '',
  method: 'POST',
  input_schema: '{\n  "type": "object",\n  "properties": {},\n  "additionalProperties": false\n}',
  allowed_tools: '',
  approval: 'never',
  safe_in_trials: false,
  timeout_ms: '10000',
  headers: '',
};

/**
 * `/tools`: the HTTP endpoints and MCP servers this workspace's channels may let their model
 * call. Header values are write-only as in the API: the page names the headers set, an empty
 * field keeps them, and "Remove the headers" clears them. Test makes one real call (or lists an
 * MCP server's tools with what is allowed).
 */
export function toolPages(ctx: PanelServices): Router {
  const router = idRouter();
  router.use((_req, res, next) => {
    res.locals.area = 'tools';
    next();
  });

  const showList = async (res: Response, form = EMPTY_FORM, refused?: Refusal) => {
    const ws = workspaceId(res);
    const [tools, channels] = await Promise.all([ctx.tools.list(ws), ctx.channels.list(ws)]);
    res.status(refused?.status ?? 200).render('tools/index', {
      title: 'Tools',
      tools: tools.map((tool) => ({ ...tool, channels: channelsNaming(channels, tool.name) })),
      methods: TOOL_METHODS,
      form,
      errors: refused?.errors ?? {},
    });
  };

  const showEdit = async (
    res: Response,
    tool: ToolJson,
    extras: { form?: ToolForm; refused?: Refusal; test?: ToolTest; input?: string } = {},
  ) => {
    const channels = channelsNaming(await ctx.channels.list(workspaceId(res)), tool.name);
    res.status(extras.refused?.status ?? 200).render('tools/edit', {
      title: tool.name,
      tool,
      channels,
      methods: TOOL_METHODS,
      form: extras.form ?? formOfTool(tool),
      errors: extras.refused?.errors ?? {},
      test: extras.test,
      input: extras.input ?? '{}',
    });
  };

  router.get('/', async (_req, res) => showList(res));

  router.post('/', async (req, res) => {
    const form = formOf(req.body);
    const body = toolBody(form);
    if ('error' in body) return showList(res, form, invalid(body.error));
    const parsed = await createToolSchema.safeParseAsync({
      ...body.value,
      kind: form.kind,
      headers: body.headers,
    });
    if (!parsed.success) return showList(res, form, invalid(fieldErrors(parsed.error)));
    let tool: ToolJson;
    try {
      tool = await ctx.tools.create(workspaceId(res), parsed.data);
    } catch (error) {
      return showList(res, form, refusalOf(error));
    }
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: `Tool ${tool.name} added: name it in a channel's AI section to offer it to the model.`,
    });
    res.redirect(303, `/tools/${tool.id}`);
  });

  router.get('/:toolId', async (req, res) => {
    await showEdit(res, await ctx.tools.get(workspaceId(res), req.params.toolId));
  });

  router.post('/:toolId', async (req, res) => {
    const ws = workspaceId(res);
    const tool = await ctx.tools.get(ws, req.params.toolId);
    const form = { ...formOf(req.body), kind: tool.kind };
    const body = toolBody(form);
    if ('error' in body) return showEdit(res, tool, { form, refused: invalid(body.error) });
    const clearHeaders = formField(req.body, 'clear_headers') === '1';
    const parsed = await updateToolSchema.safeParseAsync({
      ...body.value,
      headers: clearHeaders ? null : body.headers,
    });
    if (!parsed.success) {
      return showEdit(res, tool, { form, refused: invalid(fieldErrors(parsed.error)) });
    }
    try {
      await ctx.tools.update(ws, tool.id, parsed.data);
    } catch (error) {
      return showEdit(res, tool, { form, refused: refusalOf(error) });
    }
    await ctx.sessions.flash(signedIn(res).session, { kind: 'ok', text: 'Tool saved.' });
    res.redirect(303, `/tools/${tool.id}`);
  });

  router.post('/:toolId/test', async (req, res) => {
    const ws = workspaceId(res);
    const tool = await ctx.tools.get(ws, req.params.toolId);
    const input = textareaText(formField(req.body, 'input')).trim() || '{}';
    let given: Record<string, unknown> | undefined;
    if (tool.kind === 'http') {
      given = jsonObjectText(input);
      if (!given) {
        return showEdit(res, tool, { input, refused: invalid({ input: 'must be a JSON object' }) });
      }
    }
    try {
      const test = await ctx.tools.test(ws, tool.id, given);
      await showEdit(res, tool, { test, input });
    } catch (error) {
      await showEdit(res, tool, { input, refused: refusalOf(error) });
    }
  });

  router.post('/:toolId/delete', async (req, res) => {
    const ws = workspaceId(res);
    const tool = await ctx.tools.get(ws, req.params.toolId);
    try {
      await ctx.tools.delete(ws, tool.id);
    } catch (error) {
      return showEdit(res, tool, { refused: refusalOf(error) });
    }
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: `Tool ${tool.name} deleted.`,
    });
    res.redirect(303, '/tools');
  });

  return router;
}

/** The names of the channels whose `ai.tools` offers the tool to their model. */
function channelsNaming(channels: readonly Channel[], tool: string) {
  return channels
    .filter((channel) => channel.ai.tools.includes(tool))
    .map((channel) => ({ id: channel.id, name: channel.name }));
}

function formOf(body: unknown): ToolForm {
  const kind = formField(body, 'kind') === 'mcp' ? 'mcp' : 'http';
  return {
    name: formField(body, 'name').trim(),
    kind,
    description: textareaText(formField(body, 'description')).trim(),
    url: formField(body, 'url').trim(),
    method: formField(body, 'method') || 'POST',
    input_schema: textareaText(formField(body, 'input_schema')),
    allowed_tools: textareaText(formField(body, 'allowed_tools')),
    approval: formField(body, 'approval') === 'always' ? 'always' : 'never',
    safe_in_trials: formField(body, 'safe_in_trials') === '1',
    timeout_ms: formField(body, 'timeout_ms').trim(),
    headers: textareaText(formField(body, 'headers')),
  };
}

/** The form a stored tool is edited in: its headers' values are never sent back to the page. */
function formOfTool(tool: ToolJson): ToolForm {
  return {
    name: tool.name,
    kind: tool.kind,
    description: tool.description,
    url: tool.url,
    method: tool.method ?? 'POST',
    input_schema: JSON.stringify(tool.input_schema ?? {}, null, 2),
    allowed_tools: (tool.allowed_tools ?? []).join('\n'),
    approval: tool.approval,
    safe_in_trials: tool.safe_in_trials,
    timeout_ms: String(tool.timeout_ms),
    headers: '',
  };
}

type ToolBody =
  | { value: Record<string, unknown>; headers: Record<string, string> | undefined }
  | { error: FieldErrors };

/**
 * The members of the tool's kind read from the form's text; the schemas check the rest. Fields
 * that are not text in the API (the input schema, the timeout, the headers) are read here, and a
 * line or JSON that cannot be read is refused beside its field.
 */
function toolBody(form: ToolForm): ToolBody {
  const headers = headerLines(form.headers);
  if (typeof headers === 'string') return { error: { headers } };
  const timeout = Number(form.timeout_ms);
  const common = {
    name: form.name,
    description: form.description,
    url: form.url,
    approval: form.approval,
    safe_in_trials: form.safe_in_trials,
    timeout_ms: form.timeout_ms === '' || Number.isNaN(timeout) ? form.timeout_ms : timeout,
  };
  if (form.kind === 'mcp') {
    const allowed = form.allowed_tools
      .split(/[\n,]/)
      .map((name) => name.trim())
      .filter(Boolean);
    return { value: { ...common, allowed_tools: allowed }, headers };
  }
  const schema = jsonObjectText(form.input_schema);
  if (!schema) return { error: { input_schema: 'must be a JSON object (a JSON Schema)' } };
  return { value: { ...common, method: form.method, input_schema: schema }, headers };
}

/** `Name: value` lines as headers; undefined when there are none (the stored ones are kept). */
function headerLines(text: string): Record<string, string> | undefined | string {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (lines.length === 0) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 1) return `"${line.slice(0, 40)}" is not a "Name: value" line`;
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** A form shown again: its status, and the messages beside its fields (`form`: above it). */
interface Refusal {
  status: number;
  errors: FieldErrors;
}

const invalid = (errors: FieldErrors = {}): Refusal => ({ status: 400, errors });

/** A refusal of the tools service shown beside the form's fields; others are the error page's. */
function refusalOf(error: unknown): Refusal {
  if (!(error instanceof AppError) || error.status >= 500) throw error;
  const fields = fieldErrorsOf(error);
  if (fields) {
    return invalid(
      Object.fromEntries(fields.map((field) => [field.path || 'form', field.message])),
    );
  }
  if (error.code === 'tool_name_taken') return { status: 409, errors: { name: error.detail } };
  if (error.code === 'tool_in_use') return { status: 409, errors: { form: error.detail } };
  throw error;
}
