import { readFileSync } from 'node:fs';
import { Router } from 'express';
import { parse } from 'yaml';
import { openApiFile } from '../platform/paths.js';

export interface OpenApiDocument {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, unknown>>;
  [member: string]: unknown;
}

/** docs/openapi.yaml, the one description of the API that people read and tools check. */
export function readOpenApiDocument(file = openApiFile): OpenApiDocument {
  return parse(readFileSync(file, 'utf8')) as OpenApiDocument;
}

/**
 * `GET /api/v1/openapi.json` without authentication: the document as JSON, naming this
 * installation's address as its server so that clients generated from it work at once.
 */
export function openApiRoutes(publicBaseUrl: string): Router {
  const document = { ...readOpenApiDocument(), servers: [{ url: publicBaseUrl }] };
  const json = JSON.stringify(document);
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.set('Cache-Control', 'no-cache');
    res.type('application/json').send(json);
  });
  return router;
}
