/** Placeholder until the page is built. */
export function KeysPage() {
  return <h1>KeysPage</h1>;
}
