// The project's audit log: every change of its configuration, by whom
// (`api`, `operator` or a console member's email), with the resource
// before and after, secrets never shown (docs/API.md §19).

import type { CallOptions } from '../http.js';
import type { Query } from '../types.js';
import { Resource } from './base.js';

export class AuditLog extends Resource {
  /** Every entry, newest first (`{resource_type: 'flow'}`, `{who: 'api'}` keep those only): `for await`, or `.page()`. */
  list(params: Query<'listAuditLog'> = {}, opts?: CallOptions) {
    return this.pages('listAuditLog', {}, params, opts);
  }
}
