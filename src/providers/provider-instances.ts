import type { AiProvider } from '../ai/ai-provider.js';
import type { ProvidersService } from './providers-service.js';

/** How long a workspace's providers are used as loaded before they are read again. */
export const PROVIDERS_FRESH_MS = 5_000;

/** Workspaces whose providers a process keeps; the least recently loaded are forgotten first. */
const WORKSPACES_KEPT = 1_000;

interface Loaded {
  loadedAt: number;
  /** By provider name. */
  byName: ReadonlyMap<string, AiProvider>;
  /** By provider id and the time of its last change: a changed provider gets a new instance. */
  byVersion: ReadonlyMap<string, AiProvider>;
  loading?: Promise<ReadonlyMap<string, AiProvider>>;
  /** Changed by this process while being read: what is being read may be older. */
  changedWhileLoading?: boolean;
}

/**
 * The AI providers of each workspace as this process calls them: one instance per provider
 * (one `Retry-After` pause each), kept while the provider is unchanged. A workspace's providers
 * are read again at once when this process changed them, and otherwise once they are
 * PROVIDERS_FRESH_MS old, so a change made through another process takes effect within that
 * time. An instance replaced, deleted or forgotten is retired: its connections end with it.
 */
export class ProviderInstances {
  private readonly workspaces = new Map<string, Loaded>();

  constructor(
    private readonly providers: ProvidersService,
    /** AI_MODEL: the model of a call that names none. */
    private readonly defaultModel: string | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** The workspace's own providers by name (the built-in `default` is not among them). */
  of(workspaceId: string): Promise<ReadonlyMap<string, AiProvider>> {
    const loaded = this.workspaces.get(workspaceId);
    if (loaded?.loading) return loaded.loading;
    if (loaded && this.now() - loaded.loadedAt < PROVIDERS_FRESH_MS) {
      return Promise.resolve(loaded.byName);
    }
    const loading = this.load(workspaceId, loaded);
    this.workspaces.set(workspaceId, {
      ...(loaded ?? { byName: new Map(), byVersion: new Map() }),
      loadedAt: -Infinity,
      loading,
    });
    return loading;
  }

  /**
   * Reads the workspace's providers again (this process changed them), now rather than at its
   * next call, so that a replaced provider's connections end now. A failure to read them is
   * met again, and answered, by the next call.
   */
  forget(workspaceId: string): void {
    const loaded = this.workspaces.get(workspaceId);
    if (loaded?.loading) loaded.changedWhileLoading = true;
    else if (loaded) {
      loaded.loadedAt = -Infinity;
      this.of(workspaceId).catch(() => undefined);
    }
  }

  private async load(
    workspaceId: string,
    previous: Loaded | undefined,
  ): Promise<ReadonlyMap<string, AiProvider>> {
    try {
      const rows = await this.providers.withKeys(workspaceId);
      const byName = new Map<string, AiProvider>();
      const byVersion = new Map<string, AiProvider>();
      for (const row of rows) {
        const version = `${row.id}:${new Date(row.updated_at).getTime()}`;
        const instance =
          previous?.byVersion.get(version) ??
          this.providers.instanceOf(row, this.defaultModel ?? '');
        byName.set(row.name, instance);
        byVersion.set(version, instance);
      }
      const stale = this.workspaces.get(workspaceId)?.changedWhileLoading === true;
      this.workspaces.delete(workspaceId);
      this.workspaces.set(workspaceId, {
        loadedAt: stale ? -Infinity : this.now(),
        byName,
        byVersion,
      });
      for (const [version, instance] of previous?.byVersion ?? []) {
        if (!byVersion.has(version)) instance.retire?.();
      }
      for (const [forgotten, loaded] of this.workspaces) {
        if (this.workspaces.size <= WORKSPACES_KEPT) break;
        // One being read would get its retired instances back: it goes once read.
        if (loaded.loading) continue;
        this.workspaces.delete(forgotten);
        for (const instance of loaded.byVersion.values()) instance.retire?.();
      }
      return byName;
    } catch (error) {
      // Not kept: the next event of the workspace reads them again.
      if (previous) this.workspaces.set(workspaceId, { ...previous, loading: undefined });
      else this.workspaces.delete(workspaceId);
      throw error;
    }
  }
}
