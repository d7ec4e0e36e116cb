// <Preferences>: the user's notification preferences as switches — channel
// types, categories and flows — each a button with role="switch",
// aria-checked and a visible label, saved at once through usePreferences();
// a polite status line tells screen readers when a change is saved or refused.

import { useId, type ReactNode } from 'react';
import { usePreferences, type ChannelType } from './usePreferences.js';

const CHANNEL_LABELS: Record<ChannelType, string> = {
  in_app: 'In-app',
  email: 'Email',
  sms: 'SMS',
  web_push: 'Browser push',
  mobile_push: 'Mobile push',
  chat: 'Chat',
};

export interface PreferencesProps {
  /** The heading (default "Notification preferences"). */
  title?: string;
  /** Channel types to show, in order (default: all six). */
  channelTypes?: ChannelType[];
  /** Labels for channel types (merged over the defaults). */
  channelLabels?: Partial<Record<ChannelType, string>>;
  /** Show the flows section (default true). */
  showFlows?: boolean;
  className?: string;
}

interface SwitchProps {
  label: string;
  checked: boolean;
  onChange(on: boolean): void;
  description?: ReactNode;
  disabled?: boolean;
  name: string;
}

function Switch({ label, checked, onChange, description, disabled, name }: SwitchProps) {
  const id = useId();
  return (
    <li className="herald-switch-row">
      <span className="herald-switch-row__text">
        <span className="herald-switch-row__label" id={`${id}-l`}>
          {label}
        </span>
        {description ? (
          <span className="herald-switch-row__description" id={`${id}-d`}>
            {description}
          </span>
        ) : null}
      </span>
      <button
        type="button"
        role="switch"
        className="herald-switch"
        aria-checked={checked}
        aria-labelledby={`${id}-l`}
        aria-describedby={description ? `${id}-d` : undefined}
        disabled={disabled}
        data-name={name}
        onClick={() => onChange(!checked)}
      >
        <span className="herald-switch__thumb" aria-hidden="true" />
      </button>
    </li>
  );
}

export function Preferences({
  title = 'Notification preferences',
  channelTypes = ['in_app', 'email', 'sms', 'web_push', 'mobile_push', 'chat'],
  channelLabels,
  showFlows = true,
  className,
}: PreferencesProps) {
  const prefs = usePreferences();
  const headingId = useId();
  const labels = { ...CHANNEL_LABELS, ...channelLabels };
  const p = prefs.preferences;
  const categories = p ? Object.entries(p.categories) : [];
  const flows = p ? Object.entries(p.flows) : [];

  let status = '';
  if (prefs.saving) status = 'Saving…';
  else if (prefs.error) status = `Not saved: ${prefs.error.message}`;

  return (
    <section className={['herald-preferences', className].filter(Boolean).join(' ')} aria-labelledby={headingId}>
      <h2 className="herald-preferences__title" id={headingId}>
        {title}
      </h2>
      {!p ? (
        <p className="herald-preferences__status" role="status">
          {prefs.loading ? 'Loading…' : prefs.error ? `Could not load preferences: ${prefs.error.message}` : ''}
        </p>
      ) : (
        <>
          <h3 className="herald-preferences__group">Channels</h3>
          <ul className="herald-preferences__list">
            {channelTypes.map((t) => (
              <Switch
                key={t}
                name={`channel_types.${t}`}
                label={labels[t]}
                checked={p.channel_types[t]}
                onChange={(on) => void prefs.setChannelType(t, on)}
              />
            ))}
          </ul>
          {categories.length ? (
            <>
              <h3 className="herald-preferences__group">Categories</h3>
              <ul className="herald-preferences__list">
                {categories.map(([handle, c]) => (
                  <Switch
                    key={handle}
                    name={`categories.${handle}`}
                    label={c.name}
                    checked={c.enabled}
                    onChange={(on) => void prefs.setCategory(handle, on)}
                  />
                ))}
              </ul>
            </>
          ) : null}
          {showFlows && flows.length ? (
            <>
              <h3 className="herald-preferences__group">Notifications</h3>
              <ul className="herald-preferences__list">
                {flows.map(([handle, f]) => (
                  <Switch
                    key={handle}
                    name={`flows.${handle}`}
                    label={f.name}
                    checked={f.enabled}
                    disabled={f.critical === true}
                    description={f.critical ? 'Always on: important notices' : undefined}
                    onChange={(on) => void prefs.setFlow(handle, on)}
                  />
                ))}
              </ul>
            </>
          ) : null}
        </>
      )}
      <p className="herald-preferences__saved" role="status" aria-live="polite">
        {status}
      </p>
    </section>
  );
}
