// herald-react: React components and hooks for Herald's in-app feed, built on
// herald-client. Import the stylesheet once: `import 'herald-react/styles.css'`.

export { HeraldProvider, useHerald, useHeraldContext } from './context.js';
export type { HeraldProviderProps, HeraldContextValue } from './context.js';
export { useFeed } from './useFeed.js';
export type { UseFeedResult } from './useFeed.js';
export { usePreferences } from './usePreferences.js';
export type { UsePreferencesResult, ChannelType } from './usePreferences.js';
export { NotificationBell } from './NotificationBell.js';
export type { NotificationBellProps } from './NotificationBell.js';
export { NotificationFeed } from './NotificationFeed.js';
export type { NotificationFeedProps } from './NotificationFeed.js';
export { Preferences } from './Preferences.js';
export type { PreferencesProps } from './Preferences.js';
export { Herald, HeraldError } from 'herald-client';
export type { HeraldOptions, FeedEntry, Preferences as PreferencesData } from 'herald-client';
