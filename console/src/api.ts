/** The service's public HTTP API, called with the token typed at sign-in (kept in sessionStorage). */
const TOKEN_KEY = 'collector-console-token';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

export function getToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token: string | null): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

let onUnauthorized: () => void = () => undefined;

/** Called when the service refuses the token (it was changed, or the service restarted with another). */
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

/** The `detail` of an error body as one line. */
export function describeDetail(body: unknown, fallback: string): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((item: { loc?: unknown[]; msg?: string }) => `${(item.loc ?? []).join('.')}: ${item.msg ?? ''}`)
      .join('; ');
  }
  return fallback;
}

export async function request<T>(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  token = getToken(),
): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  const text = await response.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!response.ok) {
    const error = new ApiError(
      response.status,
      describeDetail(data, `${response.status} ${response.statusText}`),
      data,
    );
    if (response.status === 401 && token === getToken()) onUnauthorized();
    throw error;
  }
  return data as T;
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body ?? {}),
  delete: <T>(path: string) => request<T>('DELETE', path),
};

/** A query string of the non-empty values. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

// The records are the service's own (docs/api.md#records): one definition, shared with the console.
export type {
  EventRecord,
  EventSource as SourceRecord,
  EventTypeRecord,
  ProfileRecord,
  ProfileRule,
  RejectedRecord,
  SessionRecord,
  ValidationFailure,
} from '../../src/model/records.js';
export type { DestinationRecord, FailedBatch } from '../../src/model/destinations.js';
import type { EventRecord } from '../../src/model/records.js';

export type { EventStats } from '../../src/domain/event-stats.js';

export interface EventPage {
  result: EventRecord[];
  next: string | null;
}

export interface ListOf<T> {
  total: number;
  result: T[];
}
