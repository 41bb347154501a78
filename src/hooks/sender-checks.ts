import type { IncomingHttpHeaders } from 'node:http';
import type { AppError } from '../errors.js';
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
 * (415 unknown, 400 undecodable), signature (401) over the decoded body. The panel's own test event
 * (`fromPanel`) comes from a signed-in admin: no address or signature is asked of it.
 */
export async function checkSender(
  channel: ReceivingChannel,
  headers: IncomingHttpHeaders,
  body: BodyResult,
  senderIp: string | undefined,
  bodyLimitBytes: number,
  fromPanel = false,
): Promise<CheckedBody> {
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
      case 'invalid':
        return { ok: false, error: hookErrors.invalidEncoding(decoded.encoding), kept: received };
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
