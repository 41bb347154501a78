import { RolePolicy, ruleUnder, type RoleRule } from '../platform/role-policy.js';

const rule = ruleUnder('');

/**
 * The role each page and form of the panel needs, the one place it is decided: the panel's
 * middleware (panel-auth.ts, `roleGate`) consults it before a signed-in route runs, and the views
 * ask it (`can`) before they show a button or a form. The same rules as the API's (api-roles.ts):
 * a confirmation page needs the role of what it confirms. test/security/role-rules.test.ts fails
 * on a route missing here and writes docs/roles.md from this table.
 */
export const PANEL_ROLE_RULES: readonly RoleRule[] = [
  // Before sign-in, and what any signed-in admin does for themselves.
  rule('GET', '/', 'public'),
  rule('GET', '/vendor/chart.umd.js', 'public'),
  rule('GET', '/favicon.ico', 'public'),
  rule('GET', '/login', 'public'),
  rule('POST', '/login', 'public'),
  rule('GET', '/auth/oidc/start', 'public'),
  rule('GET', '/auth/oidc/callback', 'public'),
  rule('POST', '/logout', 'signed_in'),
  rule('GET', '/invitations/:token', 'public'),
  rule('POST', '/invitations/:token', 'public'),
  rule('POST', '/invitations/:token/join', 'signed_in'),
  rule('GET', '/account', 'signed_in'),
  rule('POST', '/account/password', 'signed_in'),
  rule('GET', '/workspaces/new', 'signed_in'),
  rule('POST', '/workspaces', 'signed_in'),
  rule('POST', '/workspace/switch', 'signed_in'),

  rule('GET', '/channels', 'viewer'),
  rule('GET', '/channels/new', 'editor'),
  rule('POST', '/channels', 'editor'),
  rule('GET', '/channels/:channelId', 'viewer'),
  rule('POST', '/channels/:channelId', 'editor'),
  rule('POST', '/channels/:channelId/preview', 'editor'),
  rule('POST', '/channels/:channelId/senders', 'editor'),
  rule('POST', '/channels/:channelId/test', 'editor'),
  rule('POST', '/channels/:channelId/enable', 'editor'),
  rule('POST', '/channels/:channelId/disable', 'editor'),
  rule('GET', '/channels/:channelId/regenerate', 'editor'),
  rule('POST', '/channels/:channelId/regenerate', 'editor'),
  rule('GET', '/channels/:channelId/delete', 'editor'),
  rule('POST', '/channels/:channelId/delete', 'editor'),
  rule('POST', '/channels/:channelId/trials', 'editor'),
  rule('GET', '/channels/:channelId/trials/:trialId', 'viewer'),
  rule('POST', '/channels/:channelId/trials/:trialId/promote', 'editor'),
  rule('POST', '/channels/:channelId/trials/:trialId/discard', 'editor'),
  rule('POST', '/channels/:channelId/versions/:version/restore', 'editor'),
  rule('POST', '/channels/:channelId/reply-url', 'editor'),
  rule('POST', '/channels/:channelId/reply-delivery/enable', 'editor'),
  rule('POST', '/channels/:channelId/reply-delivery/disable', 'editor'),
  rule('POST', '/channels/:channelId/reply-secret/rotate', 'editor'),
  rule('POST', '/channels/:channelId/destinations/new', 'editor'),
  rule('POST', '/channels/:channelId/destinations/:destinationId', 'editor'),
  rule('POST', '/channels/:channelId/destinations/:destinationId/remove', 'editor'),
  rule('POST', '/channels/:channelId/destinations/:destinationId/test', 'editor'),

  rule('GET', '/logs', 'viewer'),
  rule('GET', '/logs/export', 'viewer'),
  rule('GET', '/logs/stream', 'viewer'),
  rule('GET', '/logs/replay', 'editor'),
  rule('POST', '/logs/replay', 'editor'),
  rule('GET', '/logs/:eventId', 'viewer'),
  rule('GET', '/logs/:eventId/row', 'viewer'),
  rule('GET', '/logs/:eventId/panel', 'viewer'),
  rule('POST', '/logs/:eventId/replay', 'editor'),
  rule('POST', '/logs/:eventId/deliver-again', 'editor'),
  rule('POST', '/logs/:eventId/approval', 'editor'),

  rule('GET', '/providers', 'viewer'),
  rule('POST', '/providers', 'owner'),
  rule('GET', '/providers/:providerId', 'viewer'),
  rule('POST', '/providers/:providerId', 'owner'),
  rule('POST', '/providers/:providerId/delete', 'owner'),
  rule('POST', '/providers/:providerId/test', 'owner'),

  rule('GET', '/tools', 'viewer'),
  rule('POST', '/tools', 'owner'),
  rule('GET', '/tools/:toolId', 'viewer'),
  rule('POST', '/tools/:toolId', 'owner'),
  rule('POST', '/tools/:toolId/delete', 'owner'),
  rule('POST', '/tools/:toolId/test', 'owner'),

  rule('GET', '/alerts', 'viewer'),
  rule('POST', '/alerts', 'owner'),
  rule('GET', '/alerts/:alertId', 'viewer'),
  rule('POST', '/alerts/:alertId', 'owner'),
  rule('POST', '/alerts/:alertId/enable', 'owner'),
  rule('POST', '/alerts/:alertId/disable', 'owner'),
  rule('POST', '/alerts/:alertId/test', 'owner'),
  rule('GET', '/alerts/:alertId/delete', 'owner'),
  rule('POST', '/alerts/:alertId/delete', 'owner'),

  rule('GET', '/workspace', 'viewer'),
  rule('POST', '/workspace', 'owner'),
  rule('POST', '/workspace/reset-usage', 'owner'),
  rule('POST', '/workspace/api-keys', 'owner'),
  rule('POST', '/workspace/api-keys/:keyId/revoke', 'owner'),
  rule('POST', '/workspace/admins', 'owner'),
  rule('POST', '/workspace/admins/:adminId/role', 'owner'),
  rule('POST', '/workspace/admins/:adminId/remove', 'owner'),
  rule('POST', '/workspace/admins/invitations/:invitationId/cancel', 'owner'),

  rule('GET', '/audit', 'owner'),
  rule('GET', '/audit/export', 'owner'),
];

export const PANEL_ROLES = new RolePolicy(PANEL_ROLE_RULES);
