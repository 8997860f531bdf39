/** Placeholder until the page is built. */
export function RunsPage() {
  return <h1>RunsPage</h1>;
}
