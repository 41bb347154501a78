import type { IncomingHttpHeaders } from 'node:http';
import type { AppError } from '../platform/errors.js';
import type { DecodeBudget } from './decode-budget.js';
import { decodeBody } from './decode-body.js';
import { hookErrors } from './hook-errors.js';
import type { ReceivingChannel } from './ingest-repo.js';
import type { BodyResult } from './read-body.js';
import { REJECTED_BODY_BYTES } from './rejected-body.js';
import { headerValue } from './request-headers.js';
import { isSenderAllowed } from './verify/allowed-ips.js';
import { verifyRequest } from './verify/schemes.js';
import { SignatureFailure } from './verify/signature-checks.js';

/**
 * The body as the sender wrote it, or the refusal and the bytes the rejected event keeps: the
 * start of a body of `keptOf` bytes in all.
 */
export type CheckedBody =
  { ok: true; bytes: Buffer } | { ok: false; error: AppError; kept: Buffer; keptOf?: number };

/**
 * The receiver's checks between "disabled" and "media type", in the order senders rely on:
 * sender address (403), size (413, of the bytes received and of the decoded body), encoding
 * (415 unknown or too many, 400 undecodable), signature (401) over the decoded body. The panel's
 * own test event (`fromPanel`) comes from a signed-in admin: no address or signature is asked of
 * it. Throws the 503 for a compressed body that the decoders' budget has no room for now: that
 * one is not recorded, as no 503 is followed by a stored event.
 */
export async function checkSender(
  channel: ReceivingChannel,
  headers: IncomingHttpHeaders,
  body: BodyResult,
  senderIp: string | undefined,
  limits: { bodyLimitBytes: number; decodeBudget: DecodeBudget },
  fromPanel = false,
): Promise<CheckedBody> {
  const { bodyLimitBytes } = limits;
  const received = body.tooLarge ? body.head : body.bytes;
  const keptOf = body.tooLarge ? body.received : body.bytes.length;
  if (!fromPanel && !isSenderAllowed(channel.allowed_ips, senderIp))
    return { ok: false, error: hookErrors.senderNotAllowed(), kept: received, keptOf };
  if (body.tooLarge)
    return { ok: false, error: hookErrors.payloadTooLarge(bodyLimitBytes), kept: received, keptOf };

  const decoded = await decodeBody(
    body.bytes,
    headerValue(headers, 'content-encoding'),
    bodyLimitBytes,
    REJECTED_BODY_BYTES,
    limits.decodeBudget,
  );
  if (!decoded.ok) {
    switch (decoded.problem) {
      case 'too_large':
        // Decoding stopped past the limit: what was decoded is only the start of the body.
        return {
          ok: false,
          error: hookErrors.payloadTooLarge(bodyLimitBytes),
          kept: decoded.head,
          keptOf: Number.POSITIVE_INFINITY,
        };
      case 'unsupported':
        return {
          ok: false,
          error: hookErrors.unsupportedEncoding(decoded.encoding),
          kept: received,
        };
      case 'too_many':
        return { ok: false, error: hookErrors.tooManyEncodings(decoded.count), kept: received };
      case 'invalid':
        return { ok: false, error: hookErrors.invalidEncoding(decoded.encoding), kept: received };
      case 'busy':
        throw hookErrors.decodersBusy();
    }
  }

  try {
    if (!fromPanel)
      verifyRequest(
        { body: decoded.bytes, header: (name) => headerValue(headers, name) },
        channel.verification,
        channel.verification_secret,
      );
  } catch (error) {
    if (!(error instanceof SignatureFailure)) throw error;
    return { ok: false, error: hookErrors.signatureInvalid(error.message), kept: decoded.bytes };
  }
  return { ok: true, bytes: decoded.bytes };
}
