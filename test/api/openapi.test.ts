import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { readOpenApiDocument } from '../../src/api/openapi-routes.js';
import { appRoutes } from '../support/app-routes.js';
import { useTestApp } from '../support/harness.js';

const { app } = useTestApp();
const document = readOpenApiDocument();
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

interface Operation {
  operationId?: string;
  tags?: string[];
  security?: unknown[];
  responses: Record<string, unknown>;
}

const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method) => ({
    method,
    path,
    operation: item[method] as Operation,
  })),
);

// Routes the document leaves out on purpose, each with its reason.
const UNDOCUMENTED: Record<string, string> = {
  // `/hooks/` without a token: any method answers 404 channel_not_found, like an unknown token.
  'all /hooks': 'a webhook URL without its token',
};

describe('GET /api/v1/openapi.json', () => {
  it('serves the OpenAPI 3.1 document without authentication, naming this server', async () => {
    const res = await fetch(`${app.baseUrl}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const served = (await res.json()) as typeof document;
    expect(served.openapi).toMatch(/^3\.1\./);
    expect(served.servers).toEqual([{ url: app.baseUrl }]);
    expect({ ...served, servers: undefined }).toEqual({ ...document, servers: undefined });
  });
});

describe('docs/openapi.yaml', () => {
  it('describes every route of the app, and no route the app lacks', () => {
    // Parameter names may differ between the router and the document: `{id}` matches `{eventId}`.
    const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');
    const documented = new Set(operations.map((o) => `${o.method} ${shape(o.path)}`));
    const documentedPaths = new Set(Object.keys(document.paths).map(shape));
    const served = appRoutes(createApp(app.ctx)).filter(
      (route) =>
        /^\/(api|hooks)(\/|$)/.test(route.path) ||
        ['/healthz', '/readyz', '/metrics'].includes(route.path),
    );
    const missing = served
      .filter((route) => !UNDOCUMENTED[`${route.method} ${route.path}`])
      .filter((route) =>
        route.method === 'all'
          ? !documentedPaths.has(shape(route.path))
          : !documented.has(`${route.method} ${shape(route.path)}`),
      )
      .map((route) => `${route.method.toUpperCase()} ${route.path}`);
    expect(missing, 'routes the document does not describe').toEqual([]);

    const servedKeys = new Set(served.map((route) => `${route.method} ${shape(route.path)}`));
    const servedAll = new Set(served.filter((r) => r.method === 'all').map((r) => shape(r.path)));
    const phantom = operations
      .filter(
        (o) => !servedKeys.has(`${o.method} ${shape(o.path)}`) && !servedAll.has(shape(o.path)),
      )
      .map((o) => `${o.method.toUpperCase()} ${o.path}`);
    expect(phantom, 'operations the app does not serve').toEqual([]);
  });

  it('gives every operation a unique operationId and a described tag', () => {
    const ids = operations.map((o) => o.operation.operationId);
    expect(ids.filter((id) => !id)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Map(
      (document.tags as { name: string; description?: string }[]).map((t) => [
        t.name,
        t.description,
      ]),
    );
    for (const { operation } of operations) {
      for (const tag of operation.tags ?? []) expect(tags.get(tag), tag).toBeTruthy();
    }
    expect(document.info).toMatchObject({ license: { name: expect.any(String) } });
  });

  it('documents 401 for every operation that needs a key, and 404 wherever an id is in the path', () => {
    for (const { method, path, operation } of operations) {
      const name = `${method.toUpperCase()} ${path}`;
      const needsKey = (operation.security ?? (document.security as unknown[])).length > 0;
      if (needsKey) expect(operation.responses['401'], name).toBeDefined();
      if (path.includes('{')) expect(operation.responses['404'], name).toBeDefined();
    }
  });

  it('documents the 403 quota answer with resets_at and chat_quota', () => {
    const hook = operations.find((o) => o.operation.operationId === 'receiveWebhook');
    expect(hook?.operation.responses['403']).toBeDefined();
    const schemas = (document.components as { schemas: Record<string, unknown> }).schemas;
    expect(JSON.stringify(schemas.QuotaExceededProblem)).toContain('resets_at');
    expect(JSON.stringify(schemas.QuotaExceededProblem)).toContain('chat_quota');
  });
});
