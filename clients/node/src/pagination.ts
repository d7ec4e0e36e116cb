// Cursor pagination of the Admin API's lists (docs/API.md §4): a list method
// returns a PageList, which `for await` walks item by item across pages by
// following `page.after` (or `page.before` when started with `before`), and
// whose `page()` fetches a single page that knows how to fetch its neighbours.

/** The `page` object every list answers with. */
export interface PageInfo {
  limit: number;
  after: string | null;
  before: string | null;
  has_more_after: boolean;
  has_more_before: boolean;
}

/** The cursor parameters every list takes. */
export interface CursorParams {
  /** Items per page (server default 25, at most 1000). */
  limit?: number;
  /** An opaque cursor from `page.after`: the next, older page. */
  after?: string;
  /** An opaque cursor from `page.before`: the previous, newer page. */
  before?: string;
}

/** What a list endpoint answers: at least `items` and `page` (a feed adds `meta`). */
export interface ListBody<T> {
  items: T[];
  page: PageInfo;
}

/** One fetched page: the answer as the server gave it, plus its neighbours. */
export class Page<T, B extends ListBody<T> = ListBody<T>> {
  /** The items of this page, newest first. */
  readonly items: T[];
  /** The page's cursors and flags. */
  readonly page: PageInfo;
  /** The whole answer (a feed's `meta` too). */
  readonly body: B;
  private readonly fetcher: (p: Record<string, unknown>) => Promise<B>;
  private readonly params: Record<string, unknown>;

  constructor(body: B, fetcher: (p: Record<string, unknown>) => Promise<B>, params: Record<string, unknown>) {
    this.body = body;
    this.items = body.items;
    this.page = body.page;
    this.fetcher = fetcher;
    this.params = params;
  }

  /** True when an older page follows. */
  get hasNext(): boolean {
    return this.page.after != null;
  }

  /** True when a newer page precedes. */
  get hasPrevious(): boolean {
    return this.page.before != null;
  }

  /** The next, older page; null at the end. */
  async next(): Promise<Page<T, B> | null> {
    if (this.page.after == null) return null;
    const p = { ...this.params, before: undefined, after: this.page.after };
    return new Page(await this.fetcher(p), this.fetcher, p);
  }

  /** The previous, newer page; null at the start. */
  async previous(): Promise<Page<T, B> | null> {
    if (this.page.before == null) return null;
    const p = { ...this.params, after: undefined, before: this.page.before };
    return new Page(await this.fetcher(p), this.fetcher, p);
  }
}

/** Pages fetched while iterating when the caller set no `limit`. */
export const ITERATION_PAGE_SIZE = 100;

/**
 * A list, not fetched yet. `for await (const x of list)` yields every item
 * from the starting cursor on; `page()` fetches one page; `pages()` yields
 * the pages one by one.
 */
export class PageList<T, B extends ListBody<T> = ListBody<T>> implements AsyncIterable<T> {
  private readonly fetcher: (p: Record<string, unknown>) => Promise<B>;
  private readonly params: Record<string, unknown>;

  constructor(fetcher: (p: Record<string, unknown>) => Promise<B>, params: object = {}) {
    this.fetcher = fetcher;
    this.params = { ...(params as Record<string, unknown>) };
    if (this.params.after != null && this.params.before != null) {
      throw new TypeError('herald-node: pass `after` or `before`, not both');
    }
  }

  /** One page: the first (or the one at the `after`/`before` cursor given to the list). */
  async page(): Promise<Page<T, B>> {
    return new Page(await this.fetcher(this.params), this.fetcher, this.params);
  }

  /** Every page from the starting cursor on: older pages, or newer ones when started with `before`. */
  async *pages(): AsyncGenerator<Page<T, B>, void, undefined> {
    const params: Record<string, unknown> = { limit: ITERATION_PAGE_SIZE, ...this.params };
    const backwards = params.before != null;
    let page: Page<T, B> | null = new Page(await this.fetcher(params), this.fetcher, params);
    while (page) {
      yield page;
      page = backwards ? await page.previous() : await page.next();
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Every item into an array, stopping after `max` (default: all of them). */
  async toArray(max = Infinity): Promise<T[]> {
    const out: T[] = [];
    if (max <= 0) return out;
    for await (const item of this) {
      out.push(item);
      if (out.length >= max) break;
    }
    return out;
  }
}
