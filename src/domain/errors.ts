/**
 * What the pipeline refuses, in its own terms. None of these knows HTTP: src/http/errors.ts maps
 * each to a status code and a body of the error catalogue (docs/api.md#errors). Failures of the
 * store itself are the store's errors (src/storage/store.ts).
 */
import type { ValidationFailure } from '../model/records.js';

export abstract class DomainError extends Error {}

/** The request names an event source that is not stored. */
export class UnknownSource extends DomainError {
  constructor(readonly sourceId: string) {
    super(`Invalid event source \`${sourceId}\``);
  }
}

/** The request's event source is stored with `enabled: false`. */
export class SourceDisabled extends DomainError {
  constructor(readonly sourceId: string) {
    super('Event source disabled.');
  }
}

/** An event source or a client address sent more requests this second than it may. */
export class RateLimited extends DomainError {
  constructor(
    /** What was limited: "source `web`", "client address `192.0.2.1`". */
    readonly subject: string,
    readonly perSecond: number,
  ) {
    super(`Rate limit of ${perSecond} requests per second exceeded for ${subject}`);
  }
}

/** Events failed their validation schemas: the first failure is the message, `failures` has them all. */
export class ValidationFailed extends DomainError {
  constructor(readonly failures: ValidationFailure[]) {
    const first = failures[0]!;
    super(`validation failed with error: ${first.target}: ${first.reason}`);
  }
}

/** One problem of a record being saved: the path of the field inside the record, and what is wrong. */
export interface FieldProblem {
  field: (string | number)[];
  msg: string;
  type: string;
}

/** A record sent to be saved cannot be used (a validation schema that does not compile, say). */
export class InvalidRecord extends DomainError {
  constructor(readonly problems: FieldProblem[]) {
    super(problems.map((p) => `${p.field.join('.')}: ${p.msg}`).join('; '));
  }
}

/** The session or profile kept changing under the request (other requests won every attempt). */
export class Conflict extends DomainError {
  constructor(readonly what: string) {
    super(`${what} kept changing concurrently`);
  }
}
