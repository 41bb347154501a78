import { changesBetween, recordAudit } from '../audit/record-audit.js';
import type { Database, Queryable } from '../db/database.js';
import { isUniqueViolation } from '../db/sql.js';
import { whyUnreachable } from '../outbound/address-guard.js';
import { credentialAfterChange } from '../outbound/credential-scope.js';
import { invalidField, invalidFields, notFound, type AppError } from '../platform/errors.js';
import { replySchemas } from '../reply-schema/checker-pool.js';
import { SecretCutter } from '../secrets/cut-secrets.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { keptUrl, shownUrl, urlHoldsSecrets } from '../secrets/secret-values.js';
import { requireRoom } from '../workspaces/workspace-limits.js';
import { HttpToolRunner } from './http-tool-runner.js';
import { McpToolRunner } from './mcp-tool-runner.js';
import { toolErrors } from './tool-errors.js';
import { ToolListCache } from './tool-list-cache.js';
import type { ToolRunners, ToolTest } from './tool-runner.js';
import { Toolbox } from './toolbox.js';
import type { CreateTool, ToolKind, ToolMethod, UpdateTool } from './tool-schemas.js';
import * as repo from './tools-repo.js';

/** A tool as the API shows it: its headers' values never, only their names. */
export interface ToolJson {
  id: string;
  name: string;
  kind: ToolKind;
  description: string;
  approval: 'never' | 'always';
  safe_in_trials: boolean;
  timeout_ms: number;
  headers_set: string[];
  url: string;
  method?: ToolMethod;
  input_schema?: Record<string, unknown>;
  allowed_tools?: string[];
  created_at: string;
  updated_at: string;
}

export interface ToolsOptions {
  /** TOOLS_ALLOW_PRIVATE: tools may be on loopback and private addresses. */
  allowPrivate: boolean;
  /** The names of the workspace's channels whose `ai.tools` names the tool (on `db`). */
  channelsNaming: (db: Queryable, workspaceId: string, name: string) => Promise<string[]>;
  /** How each kind of tool is reached; the service's own runners unless a test gives others. */
  runners?: ToolRunners;
}

/** Members only one kind of tool has: given for the other kind, a PATCH is refused. */
const KIND_MEMBERS: Record<ToolKind, readonly (keyof UpdateTool)[]> = {
  http: ['method', 'input_schema'],
  mcp: ['allowed_tools'],
};

/** The tools of a workspace: HTTP endpoints and MCP servers its channels' models may call. */
export class ToolsService {
  private readonly runners: ToolRunners;
  /** The worker's calls of `http` tools (its connections kept alive between calls). */
  private readonly httpCalls: HttpToolRunner;
  /** The MCP servers' tool lists the worker read lately. */
  private readonly toolLists = new ToolListCache();

  constructor(
    private readonly db: Database,
    /** Seals the tools' headers and secret URLs in the database, and opens them. */
    private readonly secrets: SecretBox,
    private readonly options: ToolsOptions,
  ) {
    this.runners = options.runners ?? {
      http: new HttpToolRunner({ allowPrivate: options.allowPrivate }),
      mcp: new McpToolRunner({ allowPrivate: options.allowPrivate }),
    };
    this.httpCalls = new HttpToolRunner({ allowPrivate: options.allowPrivate });
  }

  /**
   * The tools a channel's `ai.tools` names, opened for one attempt (see Toolbox); tools deleted
   * since are not offered. Rejects when an MCP server's tools cannot be listed.
   */
  async openToolbox(workspaceId: string, names: readonly string[]): Promise<Toolbox> {
    const rows = await repo.findToolsByName(this.db, this.secrets, workspaceId, names);
    return Toolbox.open(rows, this.httpCalls, this.toolLists, this.options.allowPrivate);
  }

  /** Closes the worker's connections to tools (shutdown). */
  close(): void {
    this.httpCalls.close();
  }

  async list(workspaceId: string): Promise<ToolJson[]> {
    return (await repo.listTools(this.db, this.secrets, workspaceId)).map(toToolJson);
  }

  async get(workspaceId: string, id: string): Promise<ToolJson> {
    return toToolJson(await this.row(this.db, workspaceId, id));
  }

  async create(workspaceId: string, input: CreateTool): Promise<ToolJson> {
    await this.checkUrl(input.url, input.kind);
    const row = await this.db.transaction(async (tx) => {
      await requireRoom(tx, workspaceId, 'tools');
      const inserted = await repo.insertTool(tx, this.secrets, workspaceId, {
        ...input,
        method: input.kind === 'http' ? (input.method ?? 'POST') : undefined,
      });
      if (!inserted) throw toolErrors.nameTaken(input.name);
      const given = Object.keys(input).filter((member) => member !== 'headers');
      await recordAudit(tx, {
        workspaceId,
        action: 'tool.create',
        target: { kind: 'tool', id: inserted.id },
        // As the API shows the tool (a URL's password left out); secrets only as changed.
        changes: changesBetween(
          undefined,
          toToolJson(inserted),
          [...given, ...(input.headers ? ['headers'] : [])],
          auditedSecrets(inserted.url),
        ),
      });
      return inserted;
    });
    return toToolJson(row);
  }

  /**
   * Channels name tools, so a tool that channels name keeps its name: renaming it is refused
   * like deleting it. A new URL clears the stored headers unless the same change gives them
   * (see credentialAfterChange): they are only ever sent where their owner sent them.
   */
  async update(workspaceId: string, id: string, changes: UpdateTool): Promise<ToolJson> {
    const row = await this.db.transaction(async (tx) => {
      const current = await this.row(tx, workspaceId, id, { forUpdate: true });
      const foreign = KIND_MEMBERS[current.kind === 'http' ? 'mcp' : 'http'].filter(
        (member) => changes[member] !== undefined,
      );
      if (foreign.length) {
        throw invalidFields(
          foreign.map((path) => ({ path, message: `is not a member of ${current.kind} tools` })),
        );
      }
      if (current.kind === 'mcp' && changes.url?.includes('{{')) {
        throw badUrl("an mcp tool's URL holds no {{input.…}} placeholders");
      }
      // A URL sent back as the API showed it (its password left out) is the stored one.
      const url = changes.url === undefined ? undefined : keptUrl(changes.url, current.url);
      if (url !== undefined && url !== current.url) await this.checkUrl(url, current.kind);
      if (changes.name !== undefined && changes.name !== current.name) {
        await this.refuseInUse(tx, workspaceId, current.name);
      }
      const headers = credentialAfterChange(
        { before: current.url, after: url ?? current.url },
        changes.headers,
      );
      let updated;
      try {
        updated = await repo.updateTool(tx, this.secrets, workspaceId, id, {
          ...changes,
          url,
          headers,
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw toolErrors.nameTaken(changes.name ?? current.name);
        throw error;
      }
      if (updated) {
        const given = Object.keys(changes).filter((member) => member !== 'headers');
        await recordAudit(tx, {
          workspaceId,
          action: 'tool.update',
          target: { kind: 'tool', id },
          changes: changesBetween(
            toToolJson(current),
            toToolJson(updated),
            [...given, ...(headers !== undefined ? ['headers'] : [])],
            auditedSecrets(current.url, updated.url),
          ),
        });
      }
      return updated;
    });
    return toToolJson(orNotFound(row));
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const current = await this.row(tx, workspaceId, id, { forUpdate: true });
      // Read after the row is locked: a channel saved meanwhile naming it has committed by now.
      await this.refuseInUse(tx, workspaceId, current.name);
      await repo.deleteTool(tx, workspaceId, id);
      await recordAudit(tx, {
        workspaceId,
        action: 'tool.delete',
        target: { kind: 'tool', id },
        changes: { name: current.name },
      });
    });
  }

  /**
   * Refuses names the workspace has no tool for (`unknown_tool`). On `db`, a transaction, the
   * named tools stay locked against deletion and renaming until it ends.
   */
  async requireNames(db: Queryable, workspaceId: string, names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    const found = await repo.lockToolNames(db, workspaceId, names);
    const unknown = names.filter((name) => !found.has(name));
    if (unknown.length) throw toolErrors.unknown(unknown);
  }

  /**
   * One real exchange with the tool: an `http` tool called once with `input` (checked against
   * its `input_schema` first: `400` when it fails), an `mcp` server initialized and its tools
   * listed. The tool's header values and URL secrets are cut out of what comes back.
   */
  async test(
    workspaceId: string,
    id: string,
    input: Record<string, unknown> | undefined,
  ): Promise<ToolTest> {
    const tool = await this.row(this.db, workspaceId, id);
    if (tool.kind === 'mcp' && input !== undefined) {
      throw invalidField('input', 'an mcp tool is tested with {}: it lists its tools');
    }
    if (tool.kind === 'http') {
      const given = input ?? {};
      const problem = await replySchemas.check(
        JSON.stringify(tool.input_schema),
        JSON.stringify(given),
      );
      if (problem) throw invalidField('input', problem.replace(/^the reply\b/, 'the input'));
    }
    const answer = await this.runners[tool.kind].test(tool, input ?? {});
    const cutter = new SecretCutter({ values: Object.values(tool.headers), urls: [tool.url] });
    if (!answer.ok) return { ...answer, error: cutter.cut(answer.error) };
    if ('result' in answer) return { ...answer, result: cutter.cut(answer.result) };
    return answer;
  }

  /** A URL on a loopback or private address is refused unless TOOLS_ALLOW_PRIVATE is set. */
  private async checkUrl(url: string, kind: ToolKind): Promise<void> {
    let parsed: URL;
    try {
      // An `http` tool's placeholders stand in its path and query only: its host is as typed.
      parsed = new URL(kind === 'mcp' ? url : url.replace(/\{\{[^}]*\}\}/g, 'x'));
    } catch {
      throw badUrl('must be an http:// or https:// URL');
    }
    const refused = await whyUnreachable(parsed, {
      allowPrivate: this.options.allowPrivate,
      setting: 'TOOLS_ALLOW_PRIVATE',
    });
    if (refused) throw badUrl(`refused: ${refused}`);
  }

  private async row(
    db: Queryable,
    workspaceId: string,
    id: string,
    options?: { forUpdate: boolean },
  ): Promise<repo.ToolRow> {
    return orNotFound(await repo.findTool(db, this.secrets, workspaceId, id, options));
  }

  private async refuseInUse(db: Queryable, workspaceId: string, name: string): Promise<void> {
    const channels = await this.options.channelsNaming(db, workspaceId, name);
    if (channels.length) throw toolErrors.inUse(name, channels);
  }
}

function toToolJson(row: repo.ToolRow): ToolJson {
  const json: ToolJson = {
    id: row.id,
    name: row.name,
    kind: row.kind,
    description: row.description,
    approval: row.approval,
    safe_in_trials: row.safe_in_trials,
    timeout_ms: row.timeout_ms,
    headers_set: Object.keys(row.headers),
    url: shownUrl(row.url),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
  if (row.kind === 'http') {
    return { ...json, method: row.method ?? 'POST', input_schema: row.input_schema ?? {} };
  }
  return { ...json, allowed_tools: row.allowed_tools ?? [] };
}

function orNotFound<Row>(row: Row | undefined): Row {
  if (!row) throw notFound('This tool');
  return row;
}

function badUrl(message: string): AppError {
  return invalidField('url', message);
}

/**
 * The members the audit log shows only as `(changed)`: the headers, and the URL when it holds
 * a secret (credentials or a query string), before or after the change.
 */
function auditedSecrets(...urls: string[]): string[] {
  return urls.some(urlHoldsSecrets) ? ['headers', 'url'] : ['headers'];
}
