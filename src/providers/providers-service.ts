import { changesBetween, recordAudit } from '../audit/record-audit.js';
import { performance } from 'node:perf_hooks';
import { isUniqueViolation } from '../db/sql.js';
import { AiError, type AiProvider } from '../ai/ai-provider.js';
import { callRecord, type AiCall, type CallTarget } from '../ai/fallback-runner.js';
import type { Prices } from '../ai/call-cost.js';
import { createAiProvider, createProviderOf } from '../ai/create-provider.js';
import type { Database, Queryable } from '../db/database.js';
import { whyUnreachable } from '../outbound/address-guard.js';
import { credentialAfterChange } from '../outbound/credential-scope.js';
import type { Config } from '../platform/config.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { priceUnknown, type BudgetGate } from '../spend/budget-gate.js';
import { AppError, notFound, invalidField } from '../platform/errors.js';
import { providerErrors } from './provider-errors.js';
import { providerCalls, type ProviderCalls } from './provider-calls-repo.js';
import { DEFAULT_BASE_URLS, DEFAULT_PROVIDER, type ProviderKind } from './provider-kinds.js';
import * as repo from './providers-repo.js';
import type { CreateProvider, UpdateProvider } from './providers-schemas.js';

export type { ProviderCalls };

/** A provider as the API shows it; the key is never shown, only whether one is set. */
export interface Provider {
  id: string;
  name: string;
  kind: ProviderKind;
  base_url: string | null;
  api_key_set: boolean;
  read_only: boolean;
  /** Null for the built-in `default`, which is the server's configuration. */
  created_at: string | null;
  updated_at: string | null;
}

export type ProviderTest =
  { ok: true; model: string; latency_ms: number } | { ok: false; error: string };

export interface ProvidersOptions {
  ai: Config['ai'];
  /** The names of the workspace's channels whose `ai` names the provider (on `db`). */
  channelsNaming: (db: Queryable, workspaceId: string, name: string) => Promise<string[]>;
  /** Called after a workspace's providers changed (the worker's providers are made again). */
  onChanged?: (workspaceId: string) => void;
  /** How a workspace's calls through a provider of a kind are priced (PricesService.pricesFor). */
  pricesFor: (workspaceId: string, kind: string) => Promise<Prices>;
  /** The budget's gate, which a test's call goes through as any AI call not on a queue's slots. */
  budget: Pick<BudgetGate, 'call'>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The AI providers of a workspace: the built-in `default` and those its admins add. */
export class ProvidersService {
  constructor(
    private readonly db: Database,
    /** Seals the providers' API keys in the database, and opens them. */
    private readonly secrets: SecretBox,
    private readonly options: ProvidersOptions,
  ) {}

  /** The server's AI_* configuration, as the provider `default` of every workspace. */
  private defaultProvider(): Provider {
    const { ai } = this.options;
    return {
      id: DEFAULT_PROVIDER,
      name: DEFAULT_PROVIDER,
      kind: ai.provider,
      base_url: ai.baseUrl ?? null,
      api_key_set: Boolean(ai.apiKey),
      read_only: true,
      created_at: null,
      updated_at: null,
    };
  }

  async list(workspaceId: string): Promise<Provider[]> {
    const rows = await repo.listProviders(this.db, workspaceId);
    return [this.defaultProvider(), ...rows.map(toProvider)];
  }

  /** Per provider, the calls of the workspace's events received in the last 24 hours. */
  callsOfLastDay(workspaceId: string): Promise<ProviderCalls[]> {
    return providerCalls(this.db, workspaceId, new Date(Date.now() - DAY_MS));
  }

  async get(workspaceId: string, id: string): Promise<Provider> {
    if (id === DEFAULT_PROVIDER) return this.defaultProvider();
    return toProvider(orNotFound(await repo.findProvider(this.db, workspaceId, id)));
  }

  async create(workspaceId: string, input: CreateProvider): Promise<Provider> {
    if (input.name === DEFAULT_PROVIDER) throw providerErrors.nameTaken(input.name);
    const baseUrl = await this.checkedBaseUrl(input.kind, input.base_url);
    const row = await this.db.transaction(async (tx) => {
      const inserted = await repo.insertProvider(tx, {
        workspaceId,
        name: input.name,
        kind: input.kind,
        baseUrl: baseUrl ?? null,
      });
      if (!inserted) throw providerErrors.nameTaken(input.name);
      await recordAudit(tx, {
        workspaceId,
        action: 'provider.create',
        target: { kind: 'provider', id: inserted.id },
        changes: changesBetween(
          undefined,
          { ...toProvider(inserted), api_key: input.api_key },
          ['name', 'kind', 'base_url', ...(input.api_key ? ['api_key'] : [])],
          ['api_key'],
        ),
      });
      if (!input.api_key) return inserted;
      await repo.writeApiKey(tx, this.secrets, workspaceId, inserted.id, input.api_key);
      return { ...inserted, api_key_set: true };
    });
    this.options.onChanged?.(workspaceId);
    return toProvider(row);
  }

  /**
   * Channels name providers, so a provider that channels name keeps its name: renaming it is
   * refused like deleting it, until no channel names it. A change of server (`base_url`, `kind`)
   * clears the stored key unless the same change gives one (see credentialAfterChange).
   */
  async update(workspaceId: string, id: string, changes: UpdateProvider): Promise<Provider> {
    if (id === DEFAULT_PROVIDER) throw providerErrors.readOnly();
    if (changes.name === DEFAULT_PROVIDER) throw providerErrors.nameTaken(changes.name);
    const row = await this.db.transaction(async (tx) => {
      const current = orNotFound(await repo.findProvider(tx, workspaceId, id, { forUpdate: true }));
      const kind = changes.kind ?? current.kind;
      // The echo calls no server: a provider becoming one forgets the URL it had.
      const asked = changes.base_url === undefined && kind === 'echo' ? null : changes.base_url;
      const baseUrl = await this.checkedBaseUrl(kind, asked);
      if (changes.name !== undefined && changes.name !== current.name) {
        await this.refuseInUse(tx, workspaceId, current.name);
      }
      const apiKey = credentialAfterChange(
        {
          before: serverOf(current.kind, current.base_url),
          after: serverOf(kind, baseUrl === undefined ? current.base_url : baseUrl),
        },
        changes.api_key,
      );
      let updated;
      try {
        updated = orNotFound(
          await repo.updateProvider(tx, workspaceId, id, {
            name: changes.name,
            kind: changes.kind,
            baseUrl,
          }),
        );
      } catch (error) {
        if (isUniqueViolation(error)) throw providerErrors.nameTaken(changes.name ?? current.name);
        throw error;
      }
      // The key is recorded as changed when it was given or cleared by a change of server.
      const keyChanged = apiKey !== undefined;
      await recordAudit(tx, {
        workspaceId,
        action: 'provider.update',
        target: { kind: 'provider', id },
        changes: changesBetween(
          toProvider(current),
          toProvider(updated),
          ['name', 'kind', 'base_url', ...(keyChanged ? ['api_key'] : [])],
          ['api_key'],
        ),
      });
      if (apiKey === undefined) return updated;
      await repo.writeApiKey(tx, this.secrets, workspaceId, id, apiKey);
      return { ...updated, api_key_set: apiKey !== null };
    });
    this.options.onChanged?.(workspaceId);
    return toProvider(row);
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    if (id === DEFAULT_PROVIDER) throw providerErrors.readOnly();
    await this.db.transaction(async (tx) => {
      const current = orNotFound(await repo.findProvider(tx, workspaceId, id, { forUpdate: true }));
      // Read after the row is locked: a channel saved meanwhile naming it has committed by now.
      await this.refuseInUse(tx, workspaceId, current.name);
      await repo.deleteProvider(tx, workspaceId, id);
      await recordAudit(tx, {
        workspaceId,
        action: 'provider.delete',
        target: { kind: 'provider', id },
        changes: { name: current.name },
      });
    });
    this.options.onChanged?.(workspaceId);
  }

  /**
   * Refuses names the workspace has no provider for (`unknown_provider`). On `db`, a
   * transaction, the named providers stay locked against deletion and renaming until it ends.
   */
  async requireNames(db: Queryable, workspaceId: string, names: readonly string[]): Promise<void> {
    const own = names.filter((name) => name !== DEFAULT_PROVIDER);
    if (own.length === 0) return;
    const found = await repo.lockProviderNames(db, workspaceId, own);
    const unknown = own.filter((name) => !found.has(name));
    if (unknown.length) throw providerErrors.unknown(unknown);
  }

  /** The workspace's providers with their keys, for the worker to call. */
  async withKeys(workspaceId: string): Promise<repo.ProviderWithKey[]> {
    return repo.providersWithKeys(this.db, this.secrets, workspaceId);
  }

  /** An AI provider for stored settings (its key included); `model` is its last-resort model. */
  instanceOf(row: repo.ProviderWithKey, model: string): AiProvider {
    const { ai } = this.options;
    return createProviderOf(
      {
        kind: row.kind,
        baseUrl: row.base_url ?? DEFAULT_BASE_URLS[row.kind] ?? '',
        apiKey: row.api_key,
        timeoutMs: ai.timeoutMs,
        allowPrivate: ai.providersAllowPrivate,
      },
      model,
    );
  }

  /**
   * One small real call to the provider, with `model`; what went wrong, if anything. A test is
   * an AI call like any other, through the budget's gate: refused with `403 budget_exceeded`
   * once the workspace has spent its budget, counted while in flight, and paid for (its spend
   * recorded, no channel, no event).
   */
  async test(workspaceId: string, id: string, model: string): Promise<ProviderTest> {
    let instance: AiProvider;
    let tested: { name: string; kind: ProviderKind };
    if (id === DEFAULT_PROVIDER) {
      instance = createAiProvider(this.options.ai);
      tested = { name: DEFAULT_PROVIDER, kind: this.options.ai.provider };
    } else {
      const [row] = await repo.providersWithKeys(this.db, this.secrets, workspaceId, id);
      instance = this.instanceOf(orNotFound(row), model);
      tested = row as repo.ProviderWithKey;
    }
    const target = {
      provider: tested.name,
      instance,
      model,
      prices: await this.options.pricesFor(workspaceId, tested.kind),
    };
    try {
      return await this.options.budget.call(workspaceId, async (budgeted) => {
        const unpriced = budgeted ? priceUnknown([target]) : undefined;
        if (unpriced !== undefined) return { value: { ok: false, error: unpriced }, calls: [] };
        return testCall(target, this.options.ai.timeoutMs);
      });
    } finally {
      // Made for this one call: its connection must not outlive the answer.
      instance.retire?.();
    }
  }

  /** The base URL to store: null keeps the kind's usual server; the echo calls none. */
  private async checkedBaseUrl(
    kind: ProviderKind,
    baseUrl: string | null | undefined,
  ): Promise<string | null | undefined> {
    if (!baseUrl) return baseUrl;
    if (kind === 'echo') throw badBaseUrl('the echo kind calls no server; leave it out');
    const refused = await whyUnreachable(new URL(baseUrl), {
      allowPrivate: this.options.ai.providersAllowPrivate,
      setting: 'PROVIDERS_ALLOW_PRIVATE',
    });
    if (refused) throw badBaseUrl(`refused: ${refused}`);
    return baseUrl;
  }

  private async refuseInUse(db: Queryable, workspaceId: string, name: string): Promise<void> {
    const channels = await this.options.channelsNaming(db, workspaceId, name);
    if (channels.length) throw providerErrors.inUse(name, channels);
  }
}

function toProvider(row: repo.ProviderRow): Provider {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    base_url: row.base_url ?? DEFAULT_BASE_URLS[row.kind],
    api_key_set: row.api_key_set,
    read_only: false,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** Where a provider's calls go, as credentialAfterChange compares it: its kind and its server. */
function serverOf(kind: ProviderKind, baseUrl: string | null): string {
  return `${kind} ${baseUrl ?? DEFAULT_BASE_URLS[kind] ?? ''}`;
}

function orNotFound<Row>(row: Row | undefined): Row {
  if (!row) throw notFound('This provider');
  return row;
}

function badBaseUrl(message: string): AppError {
  return invalidField('base_url', message);
}

/** The test's one small call, as the record every AI call gets (usage and cost included). */
async function testCall(
  target: CallTarget & { instance: AiProvider; model: string },
  timeoutMs: number,
): Promise<{ value: ProviderTest; calls: AiCall[] }> {
  const started = performance.now();
  try {
    const reply = await target.instance.complete(
      { prompt: 'Reply with the word OK.', history: [], model: target.model },
      AbortSignal.timeout(timeoutMs + 1000),
    );
    const latency = reply.latencyMs || performance.now() - started;
    return {
      value: { ok: true, model: reply.model ?? target.model, latency_ms: Math.round(latency) },
      calls: [callRecord(target, latency, { reply })],
    };
  } catch (thrown) {
    const error = thrown instanceof AiError ? thrown : new AiError(String(thrown), false);
    return {
      value: { ok: false, error: error.message },
      calls: [callRecord(target, performance.now() - started, { error })],
    };
  }
}
