import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
import { API_ROLES } from '../../src/api/api-roles.js';
import { createApp } from '../../src/app.js';
import { PANEL_ROLES } from '../../src/panel/panel-roles.js';
import type { RolePolicy, RoleRule } from '../../src/platform/role-policy.js';
import { appRoutes, type AppRoute } from '../support/app-routes.js';
import { useTestApp } from '../support/harness.js';

// Sign-in with SSO configured, so its routes are served too (its issuer is never asked here).
const { app } = useTestApp({
  env: {
    OIDC_ISSUER: 'https://idp.example.com',
    OIDC_CLIENT_ID: 'hookprompt',
    OIDC_CLIENT_SECRET: 'role-rules-test-secret',
  },
});

const DOC = new URL('../../docs/roles.md', import.meta.url);

/** Rules written for routes other parts of the work add (none now). */
const RULES_AHEAD: string[] = [];

/** Routes that are no part of the API or the panel: the receiver, health and metrics. */
const outside = (path: string) =>
  /^\/hooks(\/|$)/.test(path) || ['/healthz', '/readyz', '/metrics'].includes(path);

const policyOf = (path: string): RolePolicy =>
  /^\/api\/v1(\/|$)/.test(path) ? API_ROLES : PANEL_ROLES;

/** The router's `{param}` back to Express's `:param`, as the tables write it. */
const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

function servedRoutes(): AppRoute[] {
  return appRoutes(createApp(app.ctx)).filter((route) => !outside(route.path));
}

const WHO: Record<RoleRule['role'], string> = {
  public: 'anyone (before sign-in)',
  signed_in: 'any signed-in admin',
  viewer: 'viewer',
  editor: 'editor',
  owner: 'owner',
};
const ORDER: RoleRule['role'][] = ['public', 'signed_in', 'viewer', 'editor', 'owner'];

function table(rules: RoleRule[]): string {
  const lines = rules.map((r) => `| \`${r.method}\` | \`${r.path}\` | ${WHO[r.role]} |`);
  return ['| Method | Route | Needs |', '| --- | --- | --- |', ...lines].join('\n');
}

/** docs/roles.md: every route served, with the rule it is held to, and the counts per role. */
function rolesDoc(api: RoleRule[], panel: RoleRule[]): string {
  const count = (rules: RoleRule[], role: RoleRule['role']) =>
    rules.filter((r) => r.role === role).length;
  const counts = ORDER.map(
    (role) => `| ${WHO[role]} | ${count(api, role)} | ${count(panel, role)} |`,
  );
  return `${[
    '# Roles: what each route needs',
    '',
    'Generated from the policy tables `src/api/api-roles.ts` (the management API) and',
    '`src/panel/panel-roles.ts` (the panel) by `test/security/role-rules.test.ts`, over every',
    'route the app serves; that test fails when a route has no rule or this page is out of date',
    '(`npm run docs:roles` rewrites it). A role includes the ones before it: an editor may do',
    "what a viewer may, an owner what an editor may. A request the caller's role does not allow",
    'is refused with `403` `forbidden_role` and `required_role` (the panel: a page naming the',
    'role); a request no rule matches needs `owner`.',
    '',
    '| Needs | API routes | Panel routes |',
    '| --- | --- | --- |',
    ...counts,
    `| all | ${api.length} | ${panel.length} |`,
    '',
    '## Management API (`/api/v1`)',
    '',
    table(api),
    '',
    '## Panel (pages and forms)',
    '',
    table(panel),
  ].join('\n')}\n`;
}

describe('role rules', () => {
  it('gives every route of the API and the panel a rule of its own', () => {
    const missing = servedRoutes()
      .filter((route) => !policyOf(route.path).ruleOf(route.method, expressPath(route.path)))
      .map((route) => `${route.method.toUpperCase()} ${route.path}`);
    expect(missing, 'routes without a rule in api-roles.ts or panel-roles.ts').toEqual([]);
  });

  it('has no rule for a route nobody serves', () => {
    const served = servedRoutes().map((route) =>
      `${route.method.toUpperCase()} ${expressPath(route.path)}`.replace(/:\w+/g, ':'),
    );
    const phantom = [...API_ROLES.rules, ...PANEL_ROLES.rules]
      .map((rule) => `${rule.method} ${rule.path}`)
      .filter((rule) => !RULES_AHEAD.includes(rule))
      .filter((rule) => !served.includes(rule.replace(/:\w+/g, ':')));
    expect(phantom).toEqual([]);
  });

  it('is what docs/roles.md lists', async () => {
    const rulesOf = (policy: RolePolicy, api: boolean) =>
      servedRoutes()
        .filter((route) => (policy === API_ROLES) === api && policyOf(route.path) === policy)
        .map((route) => policy.ruleOf(route.method, expressPath(route.path)) as RoleRule)
        .filter((rule, i, all) => rule && all.indexOf(rule) === i)
        .sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
    // Written as the project's formatter writes Markdown, so that its check passes on the page.
    const options = await resolveConfig(fileURLToPath(DOC));
    const expected = await format(rolesDoc(rulesOf(API_ROLES, true), rulesOf(PANEL_ROLES, false)), {
      ...options,
      parser: 'markdown',
    });
    if (process.env.WRITE_ROLES_DOC) writeFileSync(DOC, expected);
    const written = readFileSync(DOC, 'utf8');
    expect(written, 'docs/roles.md is out of date: run `npm run docs:roles`').toBe(expected);
  });
});
