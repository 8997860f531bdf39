import { Component, type ErrorInfo, type ReactNode } from 'react';
import { Link } from 'react-router';

/**
 * Catches a page that throws while rendering, so the reader gets "This page failed: <message>"
 * and a way back to /runs instead of a blank page. A change of `resetKey` (Shell passes the
 * location's key) clears a caught error, so navigating anywhere renders the next page afresh;
 * unlike a React `key`, it does not remount a healthy page when only its search changes.
 */
export class ErrorBoundary extends Component<{ children: ReactNode; resetKey?: string }, { error: unknown; seenKey?: string }> {
  override state: { error: unknown; seenKey?: string } = { error: null };

  static getDerivedStateFromError(error: unknown): { error: unknown } {
    return { error };
  }

  static getDerivedStateFromProps(
    props: { resetKey?: string },
    state: { error: unknown; seenKey?: string },
  ): Partial<{ error: unknown; seenKey?: string }> | null {
    if (state.error === null) return state.seenKey === props.resetKey ? null : { seenKey: props.resetKey };
    return state.seenKey === props.resetKey ? null : { error: null, seenKey: props.resetKey };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    console.error('The page failed', error, info.componentStack);
  }

  override render(): ReactNode {
    const { error } = this.state;
    if (error === null) return this.props.children;
    return (
      <section className="page-failed" role="alert">
        <h1>This page failed: {errorMessage(error)}</h1>
        <p>
          <Link to="/runs">Back to the runs</Link>
        </p>
      </section>
    );
  }
}

/** An error's message, or what was thrown when it is not an Error. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
