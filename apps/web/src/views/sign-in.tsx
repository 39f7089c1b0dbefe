import { type FormEvent, useState } from 'react';
import { useSessionState } from '../api/session.js';
import { ErrorNotice } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';

export function SignInPage() {
  const { signIn } = useSessionState();
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(key);
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <main id="main" className="sign-in">
      <PageTitle title="Sign in">Pipewright</PageTitle>
      <form onSubmit={(event) => void submit(event)}>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          value={key}
          onChange={(event) => setKey(event.target.value)}
        />
        <button type="submit" className="primary" disabled={busy}>
          Sign in
        </button>
        {error !== undefined && <ErrorNotice error={error} />}
      </form>
      <p className="muted">
        The key stays in this tab's memory only: reloading the page or closing the tab signs you out. An admin
        makes keys with <code>pipewright-server create-api-key --email ADDRESS</code>.
      </p>
    </main>
  );
}
