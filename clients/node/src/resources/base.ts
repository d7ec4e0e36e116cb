// The base of every resource namespace: one typed call per operation of the
// table (src/operations.ts) through the transport, and the PageList of a
// paginated list.

import type { CallOptions, RequestParts, Transport } from '../http.js';
import { OPERATIONS, type OperationId } from '../operations.js';
import { PageList, type ListBody } from '../pagination.js';
import type { Operations, Result } from '../types.js';

export abstract class Resource {
  protected readonly t: Transport;
  constructor(transport: Transport) {
    this.t = transport;
  }

  protected call<K extends OperationId & keyof Operations>(id: K, parts: RequestParts = {}, opts?: CallOptions): Promise<Result<K>> {
    return this.t.request<Result<K>>(OPERATIONS[id], parts, opts);
  }

  /** A lazily fetched list: `for await` over its items, or `.page()` for one page. */
  protected pages<K extends OperationId & keyof Operations>(
    id: K,
    path: Record<string, string>,
    query: object | undefined,
    opts?: CallOptions,
  ): PageList<ItemOf<Result<K>>, ListOf<K>> {
    const fetcher = (q: Record<string, unknown>) => this.t.request<ListOf<K>>(OPERATIONS[id], { path, query: q }, opts);
    return new PageList<ItemOf<Result<K>>, ListOf<K>>(fetcher, query ?? {});
  }
}

/** The item type of a list answer. */
export type ItemOf<B> = B extends ListBody<infer T> ? T : never;
/** A list operation's answer, known to have `items` and `page`. */
export type ListOf<K extends keyof Operations> = Result<K> & ListBody<ItemOf<Result<K>>>;

/** An external id, handle, key or UUID as a path segment: must be a non-empty string. */
export function seg(name: string, v: unknown): string {
  if (typeof v !== 'string' || v === '') throw new TypeError(`herald-node: ${name} must be a non-empty string`);
  return v;
}
