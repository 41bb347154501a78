import type { Express } from 'express';

export interface AppRoute {
  method: string;
  /** In OpenAPI's form: `/api/v1/channels/{id}`. */
  path: string;
}

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: string | string[];
}

/** Every route of an Express 5 app, nested routers walked, with the mount paths joined. */
export function appRoutes(app: Express): AppRoute[] {
  const routes: AppRoute[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const path of [layer.route.path].flat()) {
          for (const [method, on] of Object.entries(layer.route.methods)) {
            if (on)
              routes.push({ method: method === '_all' ? 'all' : method, path: join(prefix, path) });
          }
        }
      } else if (layer.handle?.stack) {
        const [mount] = [layer.rawPath ?? ''].flat();
        walk(layer.handle.stack, join(prefix, mount === '/' ? '' : (mount ?? '')));
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return routes;
}

function join(prefix: string, path: string): string {
  const joined = `${prefix}/${path}`.replace(/\/{2,}/g, '/').replace(/(.)\/$/, '$1');
  return joined.replace(/:(\w+)/g, '{$1}');
}
