// The project's suppression list: the email addresses and phone numbers it
// no longer sends to, added by hand or by providers' bounce and complaint
// reports (docs/API.md §18).

import type { CallOptions } from '../http.js';
import type { Body, Query, Result } from '../types.js';
import { Resource, seg } from './base.js';

export class Suppressions extends Resource {
  /** Every suppression, newest first (`{channel_type: 'sms'}` lists one type): `for await`, or `.page()`. */
  list(params: Query<'listSuppressions'> = {}, opts?: CallOptions) {
    return this.pages('listSuppressions', {}, params, opts);
  }

  /**
   * Suppresses an address (201), or answers its existing suppression,
   * unchanged (200). The address is stored normalised: an email
   * lower-cased, a phone number in E.164.
   */
  add(body: Body<'createSuppression'>, opts?: CallOptions): Promise<Result<'createSuppression'>> {
    return this.call('createSuppression', { body }, opts);
  }

  /**
   * Lifts the suppression, so the address is sent to again (404
   * `suppression` when it is not on the list). The address is
   * percent-encoded into the path, the `+` of a phone number as `%2B`.
   */
  async remove(channelType: 'email' | 'sms', address: string, opts?: CallOptions): Promise<void> {
    await this.call('deleteSuppression', { path: { channel_type: seg('channelType', channelType), address: seg('address', address) } }, opts);
  }
}
