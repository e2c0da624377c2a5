/**
 * Standard Webhooks signatures (docs/api.md#verifying-a-delivery): `webhook-signature` is `v1,` and
 * the base64 HMAC-SHA256, keyed with the secret's bytes, of `<webhook-id>.<webhook-timestamp>.<body>`.
 * Node's own HMAC does the work (native, and the form is this one line); the tests check every
 * signature with the `standardwebhooks` package, the reference implementation.
 */
import { createHmac } from 'node:crypto';
import { secretKey } from './records.js';

export function signatureHeaders(
  secret: string,
  id: string,
  timestampSec: number,
  body: string,
): Record<string, string> {
  const signature = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestampSec}.${body}`)
    .digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': `v1,${signature}`,
  };
}
