import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { parseAllowedIp } from '../../channels/sender-settings.js';

type Range = ReturnType<typeof parseAllowedIp>;

const compiled = new WeakMap<readonly string[], Range[]>();

/**
 * Whether a sender address is inside one of the ranges; an empty list lets everyone in.
 * IPv4 senders seen on an IPv6 socket (`::ffff:192.0.2.1`) count as their IPv4 address.
 */
export function isSenderAllowed(
  allowedIps: readonly string[],
  senderIp: string | undefined,
): boolean {
  if (allowedIps.length === 0) return true;
  if (!senderIp || !ipaddr.isValid(senderIp)) return false;
  let ranges = compiled.get(allowedIps);
  if (!ranges) {
    ranges = allowedIps.map(parseAllowedIp);
    compiled.set(allowedIps, ranges);
  }
  const sender = ipaddr.process(senderIp);
  return ranges.some(([network, bits]) => {
    if (network.kind() === sender.kind()) return sender.match(network, bits);
    // An IPv4-mapped IPv6 range (::ffff:192.0.2.0/120) holds IPv4 senders too.
    if (sender.kind() === 'ipv4' && network.kind() === 'ipv6') {
      return (sender as ipaddr.IPv4).toIPv4MappedAddress().match(network, bits);
    }
    return false;
  });
}

/**
 * The sender address as events keep it: IPv4 senders on an IPv6 socket as plain IPv4, IPv6 in
 * its short form. A plain IPv4 address (the usual case) is already that: kept without parsing it
 * into ipaddr.js's objects, garbage on every webhook.
 */
export function senderAddress(ip: string | undefined): string | undefined {
  if (!ip || isIPv4(ip)) return ip;
  return ipaddr.isValid(ip) ? ipaddr.process(ip).toString() : ip;
}
