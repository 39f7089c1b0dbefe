import { type ApiClient, createClient, type Schemas } from '@pipewright/client';
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';

// The API key lives in this module's React state only: never in localStorage,
// sessionStorage, a cookie or a URL. A reload or a closed tab forgets it, and since the
// browser never sends it by itself (no cookie), no other site can make it act: no CSRF.

export interface Session {
  account: Schemas['Account'];
  organization: Schemas['Organization'];
  /** The id of the key in use (`pwk_<id>_<secret>`, as ApiKey documents it): the keys list marks it. */
  keyId: string;
  /** A client of the API on this origin, without a project. */
  client: ApiClient;
  /** A client that sends the project header of this project. */
  projectClient(projectId: string): ApiClient;
}

interface SessionState {
  session: Session | undefined;
  signIn(apiKey: string): Promise<void>;
  signOut(): void;
}

const SessionContext = createContext<SessionState | undefined>(undefined);

function clientFor(apiKey: string, projectId?: string): ApiClient {
  return createClient({ baseUrl: window.location.origin, apiKey, ...(projectId ? { projectId } : {}) });
}

/** Checks the key with the API (its account and organization) and opens a session with it. */
async function openSession(apiKey: string): Promise<Session> {
  const client = clientFor(apiKey);
  const [{ data: account }, { data: organization }] = await Promise.all([
    client.GET('/account'),
    client.GET('/org'),
  ]);
  if (!account || !organization) throw new Error('the server answered without an account');
  const projectClients = new Map<string, ApiClient>();
  return {
    account,
    organization,
    keyId: apiKey.split('_')[1] ?? '',
    client,
    projectClient(projectId) {
      let projectClient = projectClients.get(projectId);
      if (!projectClient) {
        projectClient = clientFor(apiKey, projectId);
        projectClients.set(projectId, projectClient);
      }
      return projectClient;
    },
  };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session>();
  const queries = useQueryClient();
  const signIn = useCallback(async (apiKey: string) => {
    setSession(await openSession(apiKey.trim()));
  }, []);
  const signOut = useCallback(() => {
    // Cached answers belong to the key that fetched them: the next one must not see them.
    queries.clear();
    setSession(undefined);
  }, [queries]);
  const value = useMemo(() => ({ session, signIn, signOut }), [session, signIn, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSessionState(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSessionState outside SessionProvider');
  return state;
}

/** The open session; only pages shown after sign-in call it. */
export function useSession(): Session {
  const { session } = useSessionState();
  if (!session) throw new Error('useSession without a session');
  return session;
}
