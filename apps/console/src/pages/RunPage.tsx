/** Placeholder until the page is built. */
export function RunPage() {
  return <h1>RunPage</h1>;
}
