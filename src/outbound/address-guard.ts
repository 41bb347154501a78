import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * IPv4-compatible IPv6 (deprecated): ipaddr.js calls `::7f00:1` unicast, and reads `::127.0.0.1`
 * as if it were mapped (`::ffff:127.0.0.1`), so the range is checked by Node's own parser.
 */
const IPV4_COMPATIBLE = new BlockList();
IPV4_COMPATIBLE.addSubnet('::', 96, 'ipv6');

/**
 * Which addresses outbound calls to URLs typed in by admins (replies, AI providers) may reach. Only
 * ordinary public unicast addresses: loopback, private, link-local (the cloud metadata service
 * at 169.254.169.254 among them), unique-local, carrier-grade NAT, reserved and unspecified
 * ranges are refused, and so are IPv6 forms that embed an IPv4 address: IPv4-mapped ones are
 * judged by the IPv4 address inside, the rest (IPv4-compatible `::/96`, 6to4, NAT64) refused.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  if (isIP(address) === 6 && IPV4_COMPATIBLE.check(address, 'ipv6')) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/** Why a URL's host may not be reached, or undefined when it may. */
export class AddressRefusedError extends Error {
  override name = 'AddressRefusedError';
  readonly code = 'EADDRREFUSED_PRIVATE';
}

/**
 * The setting that lets one kind of outbound call reach non-public addresses; each kind's
 * refusals name its own setting, and only it.
 */
export type PrivateAddressSetting =
  | 'DELIVERY_ALLOW_PRIVATE'
  | 'PROVIDERS_ALLOW_PRIVATE'
  | 'TOOLS_ALLOW_PRIVATE'
  | 'ATTACHMENTS_ALLOW_PRIVATE';

/**
 * Which addresses one kind of outbound call may reach: any (`allowPrivate`), or public ones only,
 * a refusal then naming the `setting` that would allow the others.
 */
export type AddressPolicy =
  | { allowPrivate: true; setting?: PrivateAddressSetting }
  | { allowPrivate: boolean; setting: PrivateAddressSetting };

/** What each setting is usually needed for: the message says how to allow it, and why one would. */
const NEEDED_FOR: Record<PrivateAddressSetting, string> = {
  DELIVERY_ALLOW_PRIVATE: 'a receiver on the same machine or private network',
  PROVIDERS_ALLOW_PRIVATE: 'a model served on the same machine or private network',
  TOOLS_ALLOW_PRIVATE: 'a tool or MCP server on the same machine or private network',
  ATTACHMENTS_ALLOW_PRIVATE: 'images served from the same machine or private network',
};

/** The setting refusals name; undefined when the policy lets every address through. */
function guardingSetting(policy: AddressPolicy): PrivateAddressSetting | undefined {
  return policy.allowPrivate ? undefined : policy.setting;
}

function refusal(host: string, address: string, setting: PrivateAddressSetting) {
  const hint = `refused unless the server is started with ${setting}=true (needed for ${NEEDED_FOR[setting]})`;
  return new AddressRefusedError(
    host === address
      ? `${address} is a loopback, private, link-local or otherwise non-public address: ${hint}`
      : `${host} resolves to ${address}, a loopback, private, link-local or otherwise non-public address: ${hint}`,
  );
}

/**
 * A `lookup` for http.request that resolves the host, refuses it when any of its addresses is
 * not public, and hands the socket the very address it checked: a second resolution (DNS
 * rebinding) never happens between the check and the connection.
 */
export function guardedLookup(policy: AddressPolicy): LookupFunction {
  const setting = guardingSetting(policy);
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const refused = setting && list.find((a) => !isPublicAddress(a.address));
      if (refused) return callback(refusal(hostname, refused.address, setting), '', 0);
      if (options.all) return callback(null, list as unknown as string, 0);
      const first = list[0];
      if (!first)
        return callback(
          Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }),
          '',
          0,
        );
      callback(null, first.address, first.family);
    });
  };
}

/** A host written as an IP address is never looked up, so it is checked by itself. */
export function refuseLiteralAddress(host: string, policy: AddressPolicy): void {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const setting = guardingSetting(policy);
  if (setting && isIP(bare) && !isPublicAddress(bare)) throw refusal(bare, bare, setting);
}

/**
 * The check made when a URL is saved: undefined when its host may be reached, else why not.
 * A host that does not resolve (yet) is let through: the check at connect time still applies.
 */
export async function whyUnreachable(
  url: URL,
  policy: AddressPolicy,
  timeoutMs = 2_000,
): Promise<string | undefined> {
  const setting = guardingSetting(policy);
  if (!setting) return undefined;
  try {
    refuseLiteralAddress(url.hostname, policy);
  } catch (error) {
    return (error as Error).message;
  }
  if (isIP(url.hostname.replace(/^\[(.*)\]$/, '$1'))) return undefined;
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    const timer = setTimeout(() => resolve([]), timeoutMs);
    dnsLookup(url.hostname, { all: true }, (error, found) => {
      clearTimeout(timer);
      resolve(error ? [] : found);
    });
  });
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  return refused ? refusal(url.hostname, refused.address, setting).message : undefined;
}
