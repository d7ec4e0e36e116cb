// usePreferences(): the user's preferences (GET /user/v1/preferences) as React
// state, with setters that change them at once and persist them through
// herald-client (PUT, a partial update), rolling back if the server refuses.

import { useCallback, useEffect, useRef, useState } from 'react';
import type { ChannelTypeFlags, Preferences, PreferencesInput } from 'herald-client';
import { useHerald } from './context.js';

export type ChannelType = keyof ChannelTypeFlags;

export interface UsePreferencesResult {
  preferences: Preferences | null;
  loading: boolean;
  /** Updates in flight. */
  saving: boolean;
  /** The last load or save error (a refused save is rolled back). */
  error: Error | null;
  /** Applies a partial update now and persists it; resolves with the server's answer (null when refused). */
  update(change: PreferencesInput): Promise<Preferences | null>;
  setChannelType(type: ChannelType, on: boolean): Promise<Preferences | null>;
  setCategory(handle: string, enabled: boolean): Promise<Preferences | null>;
  setFlow(handle: string, enabled: boolean): Promise<Preferences | null>;
  reload(): Promise<void>;
}

/** The change as the server would show it, for the optimistic state. */
function applyLocally(p: Preferences, c: PreferencesInput): Preferences {
  const next: Preferences = {
    ...p,
    channel_types: { ...p.channel_types, ...(c.channel_types ?? {}) } as ChannelTypeFlags,
    categories: { ...p.categories },
    flows: { ...p.flows },
  };
  for (const [h, v] of Object.entries(c.categories ?? {})) {
    const cur = next.categories[h];
    if (cur) next.categories[h] = { ...cur, enabled: v.enabled ?? cur.enabled, channel_types: { ...cur.channel_types, ...(v.channel_types ?? {}) } as ChannelTypeFlags };
  }
  for (const [h, v] of Object.entries(c.flows ?? {})) {
    const cur = next.flows[h];
    if (cur) next.flows[h] = { ...cur, enabled: v.enabled ?? cur.enabled, channel_types: { ...cur.channel_types, ...(v.channel_types ?? {}) } as ChannelTypeFlags };
  }
  if (c.quiet_hours !== undefined) next.quiet_hours = c.quiet_hours;
  return next;
}

export function usePreferences(): UsePreferencesResult {
  const herald = useHerald();
  const [preferences, setPreferences] = useState<Preferences | null>(null);
  const [loading, setLoading] = useState(true);
  const [pending, setPending] = useState(0);
  const [error, setError] = useState<Error | null>(null);
  // the server's last answer: a refused update rolls back to it
  const confirmed = useRef<Preferences | null>(null);
  // answers may come back out of order: only the latest request's answer is shown
  const latest = useRef(0);

  const reload = useCallback(async () => {
    setLoading(true);
    try {
      const p = await herald.getPreferences();
      confirmed.current = p;
      setPreferences(p);
      setError(null);
    } catch (e) {
      setError(e instanceof Error ? e : new Error(String(e)));
    } finally {
      setLoading(false);
    }
  }, [herald]);

  useEffect(() => {
    void reload();
  }, [reload]);

  const update = useCallback(
    async (change: PreferencesInput): Promise<Preferences | null> => {
      const n = ++latest.current;
      setPreferences((p) => (p ? applyLocally(p, change) : p));
      setPending((k) => k + 1);
      try {
        const answer = await herald.setPreferences(change);
        confirmed.current = answer;
        if (n === latest.current) setPreferences(answer);
        setError(null);
        return answer;
      } catch (e) {
        setError(e instanceof Error ? e : new Error(String(e)));
        if (n === latest.current) setPreferences(confirmed.current);
        return null;
      } finally {
        setPending((k) => k - 1);
      }
    },
    [herald],
  );

  const setChannelType = useCallback((type: ChannelType, on: boolean) => update({ channel_types: { [type]: on } }), [update]);
  const setCategory = useCallback((handle: string, enabled: boolean) => update({ categories: { [handle]: { enabled } } }), [update]);
  const setFlow = useCallback((handle: string, enabled: boolean) => update({ flows: { [handle]: { enabled } } }), [update]);

  return { preferences, loading, saving: pending > 0, error, update, setChannelType, setCategory, setFlow, reload };
}
