import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { SessionProvider } from './api/session.js';
import { App } from './app.js';
import './styles.css';

const queries = new QueryClient({
  defaultOptions: {
    // Errors of the API are answers (a 404 stays a 404): retrying only delays showing them.
    queries: { retry: false, refetchOnWindowFocus: true, staleTime: 2_000 },
  },
});

const root = document.getElementById('root');
if (!root) throw new Error('no #root element');
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queries}>
      <SessionProvider>
        <App />
      </SessionProvider>
    </QueryClientProvider>
  </StrictMode>,
);
