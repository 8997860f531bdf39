import { useState, type FormEvent } from 'react';

/** The sign-in form: an API key, checked against the API before the console opens. */
export function SignInPage(props: { submit: (key: string) => Promise<string | null>; notice: string | null }) {
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    // Read from the form, never kept in React state: a controlled value is mirrored into the
    // input's HTML attribute, and the key would sit in the page's markup while it is typed.
    const key = String(new FormData(event.currentTarget as HTMLFormElement).get('api-key') ?? '');
    setProblem(await props.submit(key));
    setBusy(false);
  };
  return (
    <main className="sign-in">
      <form onSubmit={onSubmit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Weft console</h1>
        {props.notice && (
          <p className="notice" role="status">
            {props.notice}
          </p>
        )}
        <label htmlFor="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autoComplete="off" spellCheck={false} placeholder="weft_…" autoFocus />
        <p className="hint">Kept in this tab until you sign out or close it. Its role decides what you can do here.</p>
        {problem && (
          <p className="error" role="alert">
            {problem}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
