// The herald-react example app: a product header with the notification bell
// (the feed opens from it) and the user's preferences. It talks to Herald on
// its own origin (example/server.mjs proxies /user/v1 to Herald, which sends
// no CORS headers). The user comes from the URL: `?api_key=pk_…&user_id=…`
// (development: the project's security mode off) or `&user_token=<JWT>`;
// `&page_size=N` and `&bell=unseen` show the provider's and the bell's options.

import { StrictMode, version } from 'react';
import { createRoot } from 'react-dom/client';
import { HeraldProvider, NotificationBell, Preferences } from '../dist/index.js';
import '../dist/styles.css';
import './example.css';

// which React this build runs on (the tests build it with 18 and 19)
document.documentElement.dataset.react = version;

const q = new URLSearchParams(location.search);
const publicKey = q.get('api_key') ?? '';
const userId = q.get('user_id') ?? undefined;
const userToken = q.get('user_token') ?? undefined;
const pageSize = q.get('page_size') ? Number(q.get('page_size')) : undefined;
// `&bell=unseen`: the badge counts new (unseen) entries and opening the feed clears it
const unseenBell = q.get('bell') === 'unseen';

function App() {
  if (!publicKey || (!userId && !userToken)) {
    return (
      <main className="example-main">
        <h1>herald-react example</h1>
        <p>Open this page with <code>?api_key=pk_…&amp;user_id=…</code> (or <code>&amp;user_token=…</code>).</p>
      </main>
    );
  }
  return (
    <HeraldProvider config={{ baseUrl: location.origin, publicKey, userId, userToken }} pageSize={pageSize}>
      <header className="example-header">
        <span className="example-logo">Acme</span>
        <nav aria-label="Account">
          <NotificationBell count={unseenBell ? 'unseen' : 'unread'} markSeenOnOpen={unseenBell} />
        </nav>
      </header>
      <main className="example-main">
        <h1>Your account</h1>
        <Preferences />
      </main>
    </HeraldProvider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
