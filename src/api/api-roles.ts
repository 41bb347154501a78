import { RolePolicy, ruleUnder, type RoleRule } from '../platform/role-policy.js';

const rule = ruleUnder('/api/v1');

/**
 * The role each route of the management API needs, the one place it is decided (the middleware
 * of `apiRouter` consults it before any route runs). Viewers read everything but the secrets and
 * the audit log; editors also change channels and act on events; owners also manage who and what
 * the workspace trusts. test/security/role-rules.test.ts fails on a route missing here and
 * writes docs/roles.md from this table.
 */
export const API_ROLE_RULES: readonly RoleRule[] = [
  rule('GET', '/openapi.json', 'public'),

  rule('GET', '/workspace', 'viewer'),
  rule('PATCH', '/workspace', 'owner'),

  rule('GET', '/channels', 'viewer'),
  rule('POST', '/channels', 'editor'),
  rule('GET', '/channels/:channelId', 'viewer'),
  rule('PATCH', '/channels/:channelId', 'editor'),
  rule('DELETE', '/channels/:channelId', 'editor'),
  rule('POST', '/channels/:channelId/regenerate-url', 'editor'),
  rule('GET', '/channels/:channelId/versions', 'viewer'),
  rule('POST', '/channels/:channelId/versions/:version/restore', 'editor'),
  rule('GET', '/channels/:channelId/reply-secret', 'editor'),
  rule('POST', '/channels/:channelId/reply-secret/rotate', 'editor'),

  rule('GET', '/channels/:channelId/trials', 'viewer'),
  rule('POST', '/channels/:channelId/trials', 'editor'),
  rule('GET', '/trials/:trialId', 'viewer'),
  rule('POST', '/trials/:trialId/cancel', 'editor'),
  rule('POST', '/trials/:trialId/promote', 'editor'),

  rule('GET', '/events', 'viewer'),
  rule('GET', '/events/export', 'viewer'),
  rule('GET', '/events/stream', 'viewer'),
  rule('GET', '/events/:eventId', 'viewer'),
  rule('POST', '/events/replay', 'editor'),
  rule('POST', '/events/:eventId/replay', 'editor'),
  rule('POST', '/events/:eventId/redeliver', 'editor'),
  rule('POST', '/events/:eventId/approval', 'editor'),

  rule('GET', '/usage', 'viewer'),
  rule('GET', '/spend', 'viewer'),

  rule('GET', '/providers', 'viewer'),
  rule('POST', '/providers', 'owner'),
  rule('GET', '/providers/:providerId', 'viewer'),
  rule('PATCH', '/providers/:providerId', 'owner'),
  rule('DELETE', '/providers/:providerId', 'owner'),
  rule('POST', '/providers/:providerId/test', 'owner'),

  rule('GET', '/tools', 'viewer'),
  rule('POST', '/tools', 'owner'),
  rule('GET', '/tools/:toolId', 'viewer'),
  rule('PATCH', '/tools/:toolId', 'owner'),
  rule('DELETE', '/tools/:toolId', 'owner'),
  rule('POST', '/tools/:toolId/test', 'owner'),

  rule('GET', '/prices', 'viewer'),
  rule('PUT', '/prices/:model', 'owner'),
  rule('DELETE', '/prices/:model', 'owner'),

  rule('GET', '/api-keys', 'viewer'),
  rule('POST', '/api-keys', 'owner'),
  rule('DELETE', '/api-keys/:keyId', 'owner'),

  rule('GET', '/admins', 'viewer'),
  rule('PATCH', '/admins/:adminId', 'owner'),
  rule('DELETE', '/admins/:adminId', 'owner'),
  rule('POST', '/invitations', 'owner'),

  rule('GET', '/alerts', 'viewer'),
  rule('POST', '/alerts', 'owner'),
  rule('GET', '/alerts/secret', 'owner'),
  rule('GET', '/alerts/:alertId', 'viewer'),
  rule('PATCH', '/alerts/:alertId', 'owner'),
  rule('DELETE', '/alerts/:alertId', 'owner'),
  rule('POST', '/alerts/:alertId/test', 'owner'),

  rule('GET', '/audit', 'owner'),
  rule('GET', '/audit/export', 'owner'),
];

export const API_ROLES = new RolePolicy(API_ROLE_RULES);
