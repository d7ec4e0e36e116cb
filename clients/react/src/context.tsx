// <HeraldProvider>: makes one herald-client `Herald` (or the one given) and
// its feed store available to every hook and component below it, so the bell
// and the feed share one store and one live socket.

import { createContext, useContext, useEffect, useMemo, type ReactNode } from 'react';
import { Herald, type Feed, type HeraldOptions } from 'herald-client';

export interface HeraldContextValue {
  herald: Herald;
  /** The feed store the components use (`herald.feed`, or one with the provider's `pageSize`). */
  feed: Feed;
}

const HeraldContext = createContext<HeraldContextValue | null>(null);

export interface HeraldProviderProps {
  /** An existing client; wins over `config`. */
  client?: Herald;
  /** Options for a new client (`baseUrl`, `publicKey`, `userToken` or `userId`, …). */
  config?: HeraldOptions;
  /** Entries per page of the feed (herald-client's default is 25). */
  pageSize?: number;
  children?: ReactNode;
}

export function HeraldProvider({ client, config, pageSize, children }: HeraldProviderProps) {
  if (!client && !config) throw new TypeError('herald-react: <HeraldProvider> needs `client` or `config`');
  // A new client only when the identity changes: a config object recreated on
  // every render must not reopen the socket each time.
  const hasToken = !!config?.userToken;
  const herald = useMemo(
    () => client ?? new Herald(config as HeraldOptions),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [client, config?.baseUrl, config?.publicKey, config?.userId, hasToken],
  );
  // A token refreshed by the app goes to the same client (no new socket).
  const token = client ? undefined : config?.userToken;
  useEffect(() => {
    if (token && herald.userToken !== token) herald.setUserToken(token);
  }, [herald, token]);
  const feed = useMemo(() => (pageSize ? herald.createFeed({ pageSize }) : herald.feed), [herald, pageSize]);
  const value = useMemo(() => ({ herald, feed }), [herald, feed]);
  return <HeraldContext.Provider value={value}>{children}</HeraldContext.Provider>;
}

/** The provider's client and feed store; throws outside a <HeraldProvider>. */
export function useHeraldContext(): HeraldContextValue {
  const v = useContext(HeraldContext);
  if (!v) throw new Error('herald-react: hooks and components must be used inside <HeraldProvider>');
  return v;
}

/** The provider's herald-client instance (for calls the hooks do not wrap). */
export function useHerald(): Herald {
  return useHeraldContext().herald;
}
