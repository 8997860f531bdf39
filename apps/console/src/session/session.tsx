import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { Provider } from 'urql';
import { connect, type ApiConnection } from '../api/client.js';
import { errorText } from '../api/errors.js';
import type { ApiKeyRole, WhoamiQuery } from '../api/generated/graphql.js';
import { WHOAMI } from '../api/operations.js';
import { forgetGraphiQL } from './graphiql-storage.js';

/** A key's role; each includes the ones after it. */
export type Role = ApiKeyRole;

/** Who the console is signed in as. */
export type Caller = WhoamiQuery['whoami'];

/** What a page may do, by the role of the key (the API enforces the same; the page only hides). */
export interface Can {
  /** Start, signal, cancel and retry runs (operator, admin). */
  operate: boolean;
  /** Publish, set default and deprecate versions, manage keys (admin). */
  administer: boolean;
}

interface SessionValue {
  caller: Caller;
  can: Can;
  signOut(reason?: string): void;
  /** See {@link ApiConnection.onReconnected}. */
  onReconnected(listener: () => void): () => void;
}

const SessionContext = createContext<SessionValue | null>(null);

/** The key is kept for this browser tab's session only (sessionStorage), never in localStorage. */
const STORAGE_KEY = 'weft.console.apiKey';

/** The signed-in caller; throws outside {@link SessionProvider}'s signed-in branch. */
export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside a signed-in console');
  return value;
}

/** Calls `listener` (the latest given) each time the live socket connects again after a loss. */
export function useReconnected(listener: () => void): void {
  const { onReconnected } = useSession();
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => onReconnected(() => latest.current()), [onReconnected]);
}

/** What the role of the signed-in key allows. */
export function useCan(): Can {
  return useSession().can;
}

export function canOf(role: Role): Can {
  return { operate: role === 'operator' || role === 'admin', administer: role === 'admin' };
}

interface SignedIn {
  key: string;
  caller: Caller;
  connection: ApiConnection;
}

/**
 * Signs the console in and out. Signed out, it renders `signIn` with a submit function that
 * checks the key against the API (`whoami`) before keeping it; signed in, it renders `children`
 * inside a urql Provider bound to the key. A key the API refuses later (revoked: an
 * UNAUTHENTICATED answer or the socket closed with 4401) signs the page out with a message.
 */
export function SessionProvider(props: { signIn: (submit: (key: string) => Promise<string | null>, notice: string | null) => ReactNode; children: ReactNode }) {
  const [state, setState] = useState<SignedIn | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [restoring, setRestoring] = useState(() => sessionStorage.getItem(STORAGE_KEY) !== null);

  const signOut = useCallback((reason?: string) => {
    sessionStorage.removeItem(STORAGE_KEY);
    forgetGraphiQL();
    setState((s) => {
      s?.connection.dispose();
      return null;
    });
    setNotice(reason ?? null);
  }, []);

  const submit = useCallback(
    async (key: string): Promise<string | null> => {
      const trimmed = key.trim();
      if (!trimmed) return 'Enter an API key (it starts with weft_).';
      // Until whoami accepted the key, a refusal is this form's answer, not a revoked session.
      let accepted = false;
      const connection = connect(trimmed, () => accepted && signOut('The API no longer accepts this key (revoked?): sign in again.'));
      const result = await connection.client.query<WhoamiQuery>(WHOAMI, {}, { requestPolicy: 'network-only' }).toPromise();
      const caller = result.data?.whoami;
      if (!caller) {
        connection.dispose();
        return result.error ? errorText(result.error) : 'The API did not say who this key is.';
      }
      accepted = true;
      sessionStorage.setItem(STORAGE_KEY, trimmed);
      setNotice(null);
      setState({ key: trimmed, caller, connection });
      return null;
    },
    [signOut],
  );

  useEffect(() => {
    const kept = sessionStorage.getItem(STORAGE_KEY);
    if (!kept) return;
    void submit(kept).then((problem) => {
      if (problem) {
        sessionStorage.removeItem(STORAGE_KEY);
        setNotice(problem);
      }
      setRestoring(false);
    });
  }, [submit]);

  const value = useMemo(
    () => (state ? { caller: state.caller, can: canOf(state.caller.role), signOut, onReconnected: state.connection.onReconnected } : null),
    [state, signOut],
  );

  if (restoring && !state)
    return (
      <p className="loading" role="status">
        Signing in…
      </p>
    );
  if (!state || !value) return <>{props.signIn(submit, notice)}</>;
  return (
    <SessionContext.Provider value={value}>
      <Provider value={state.connection.client}>{props.children}</Provider>
    </SessionContext.Provider>
  );
}
