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
 * Which addresses outbound calls to URLs typed in by admins (reply delivery) may reach. Only
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

/** A receiver on the same machine or network is the usual reason: the message says how to allow it. */
const ALLOW_HINT =
  'refused unless the server is started with DELIVERY_ALLOW_PRIVATE=true (needed for a receiver on the same machine or private network)';

const refusal = (host: string, address: string) =>
  new AddressRefusedError(
    host === address
      ? `${address} is a loopback, private, link-local or otherwise non-public address: ${ALLOW_HINT}`
      : `${host} resolves to ${address}, a loopback, private, link-local or otherwise non-public address: ${ALLOW_HINT}`,
  );

/**
 * A `lookup` for http.request that resolves the host, refuses it when any of its addresses is
 * not public, and hands the socket the very address it checked: a second resolution (DNS
 * rebinding) never happens between the check and the connection.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const refused = allowPrivate ? undefined : list.find((a) => !isPublicAddress(a.address));
      if (refused) return callback(refusal(hostname, refused.address), '', 0);
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
export function refuseLiteralAddress(host: string, allowPrivate: boolean): void {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (!allowPrivate && isIP(bare) && !isPublicAddress(bare)) throw refusal(bare, bare);
}

/**
 * The check made when a URL is saved: undefined when its host may be reached, else why not.
 * A host that does not resolve (yet) is let through: the check at connect time still applies.
 */
export async function whyUnreachable(
  url: URL,
  allowPrivate: boolean,
  timeoutMs = 2_000,
): Promise<string | undefined> {
  if (allowPrivate) return undefined;
  try {
    refuseLiteralAddress(url.hostname, false);
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
  return refused ? refusal(url.hostname, refused.address).message : undefined;
}
